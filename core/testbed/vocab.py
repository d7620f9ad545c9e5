"""Vocabularies of the seed-000 testbed: names, places, pools and the calendar.

These are data facts of the released benchmark (the benchmark specification §2.1, §2.5);
persona ids depend on the name lists, so their order matters.
Integer codes elsewhere in :mod:`core.testbed` index into these tuples (``-1`` = none).
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

__all__ = [
    "AFTERHOURS_REASONS",
    "AFTERHOURS_STYLES",
    "CITIES",
    "DATES",
    "DAY_INDEX",
    "DIETS",
    "DIET_WEIGHTS",
    "DIFFICULTIES",
    "DIFFICULTY_SLUGS",
    "EXERCISE_TYPES",
    "FAKE_EXERCISES",
    "FAKE_SOCIAL",
    "FIRST_NAMES",
    "GENDERS",
    "IS_WEEKEND",
    "LAST_NAMES",
    "N_DAYS",
    "OCCUPATIONS",
    "RELATIONSHIPS",
    "RELAXATION_ACTIVITIES",
    "SCENARIOS",
    "SOCIAL_ACTIVITIES",
    "SOCIAL_PREFS",
    "SOCIAL_PREF_WEIGHTS",
    "SPLITS",
    "START_DATE",
    "STATED_EXTRA_SOCIAL",
    "STRESS_EVENTS",
    "WEEKDAY_NAMES",
    "WORK_HEAVY",
    "minutes_to_clock",
]

N_DAYS = 30
START_DATE = _dt.date(2026, 1, 3)  # a Saturday
DATES: tuple[str, ...] = tuple(
    (START_DATE + _dt.timedelta(days=i)).isoformat() for i in range(N_DAYS)
)
DAY_INDEX = np.arange(1, N_DAYS + 1, dtype=np.int16)
WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = np.array([(START_DATE + _dt.timedelta(days=i)).weekday() for i in range(N_DAYS)])
IS_WEEKEND = _WEEKDAY >= 5
IS_WEEKEND.setflags(write=False)
DAY_INDEX.setflags(write=False)

DIFFICULTIES = ("stable", "temporal_shift", "stated_vs_revealed")
DIFFICULTY_SLUGS = ("stable", "shift", "stated")
SPLITS = ("train", "dev", "calibration", "test")

FIRST_NAMES = (
    "Avery", "Jordan", "Taylor", "Morgan", "Casey", "Riley", "Quinn", "Cameron", "Parker", "Reese",
    "Alex", "Maya", "Logan", "Skyler", "Harper", "Elliot", "Sage", "Rowan", "Blake", "Emerson",
    "Drew", "Jules", "Noah", "Leah", "Miles", "Nina", "Evan", "Priya", "Owen", "Lena",
    "Caleb", "Sofia", "Julian", "Naomi", "Isaac", "Mila", "Theo", "Aisha", "Leo", "Clara",
    "Felix", "Tessa", "Micah", "Zoe", "Adrian", "Ivy", "Simon", "Elena", "Omar", "Hazel",
    "Sam", "Ruby", "Aria", "Jonah", "Luca", "Maeve", "Nora", "Ezra", "Maren", "Kai",
    "Vera", "Liam", "Dahlia", "Milo", "Jasper", "Cora", "Rohan", "Amelia", "Kira", "Sebastian",
)
LAST_NAMES = (
    "Adams", "Bennett", "Carter", "Diaz", "Ellis", "Foster", "Garcia", "Hayes", "Iqbal", "Jenkins",
    "Kim", "Lopez", "Morgan", "Nguyen", "Owens", "Patel", "Quintero", "Ramirez", "Singh", "Turner",
    "Underwood", "Vasquez", "Walker", "Xu", "Young", "Zimmerman", "Brooks", "Campbell", "Davis",
    "Edwards", "Flores", "Griffin", "Howard", "Ivanov", "Jackson", "Khan", "Larson", "Mitchell",
    "Nakamura", "Ortiz",
)
GENDERS = ("female", "male", "non-binary")
OCCUPATIONS = (
    "software engineer", "teacher", "marketing manager", "product designer",
    "nurse", "financial analyst", "graduate student", "freelance writer",
    "architect", "physical therapist", "project manager", "chef",
    "accountant", "graphic designer", "data analyst", "sales manager",
    "research assistant", "operations specialist", "customer success manager", "UX researcher",
)
WORK_HEAVY = frozenset({
    "software engineer", "product designer", "project manager",
    "operations specialist", "marketing manager", "financial analyst",
})
CITIES = (
    "Austin, TX", "Chicago, IL", "Portland, OR", "Seattle, WA", "Boston, MA",
    "Denver, CO", "Atlanta, GA", "San Diego, CA", "Minneapolis, MN", "Philadelphia, PA",
    "Nashville, TN", "Charlotte, NC", "Phoenix, AZ", "Madison, WI", "Brooklyn, NY",
    "Columbus, OH", "Ann Arbor, MI", "Raleigh, NC", "Pittsburgh, PA", "Salt Lake City, UT",
)
RELATIONSHIPS = ("single", "in a relationship", "married")
DIETS = ("none", "vegetarian", "vegan", "low-carb", "gluten-free")
DIET_WEIGHTS = (0.55, 0.15, 0.10, 0.10, 0.10)
SOCIAL_PREFS = ("in person", "online", "no preference")
SOCIAL_PREF_WEIGHTS = (0.60, 0.15, 0.25)
# Activity codes: 0..14 the shared pool, 15..16 the stated personas' extra activity,
# 17..19 the self-report's fake casual activities.
SOCIAL_ACTIVITIES = (
    "dinner with friends", "coffee with a colleague", "family brunch",
    "book club", "board game night", "pickup basketball",
    "bar trivia", "group hike", "birthday dinner",
    "video call with friends", "coworking session", "art gallery opening",
    "live music night", "church gathering", "neighborhood walk",
    "late-night drinks", "networking meetup",
    "called a friend", "grabbed coffee with someone", "went for a walk with a friend",
)
STATED_EXTRA_SOCIAL = (15, 16)
FAKE_SOCIAL = (17, 18, 19)
EXERCISE_TYPES = (
    "running", "cycling", "yoga", "pilates", "strength training",
    "swimming", "walking", "dance", "hiking", "boxing", "stretching",
)
FAKE_EXERCISES = (6, 10, 2)  # walking, stretching, yoga
RELAXATION_ACTIVITIES = (
    "reading", "gaming", "watching TV", "meditation", "journaling",
    "podcasts", "stretching", "cooking", "music", "sketching",
    "gardening", "documentaries", "scrolling phone",
)
STRESS_EVENTS = (
    "tight deadline", "difficult client call", "unexpected bug", "last-minute changes",
    "team conflict", "presentation prep", "budget concerns", "overloaded inbox",
)
AFTERHOURS_REASONS = ("self_project", "team_need")  # codes 0, 1; -1 = none
AFTERHOURS_STYLES = ("strict_boundary", "flexible")  # codes 0, 1; -1 = null (no style)

SCENARIOS = (
    "promotion_crunch", "family_caregiving", "wellness_reset", "launch_crunch",
    "new_relationship", "health_scare", "relocation", "burnout_recovery",
)


def minutes_to_clock(minutes: int | float) -> str:
    """Format bedtime minutes (times after midnight counted +24 h) as ``HH:MM``."""
    m = int(minutes) % 1440
    return f"{m // 60:02d}:{m % 60:02d}"
