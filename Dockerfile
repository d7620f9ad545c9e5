# Arbiter as a container, in the style of a Hugging Face Spaces Docker app (sdk: docker,
# app_port: 8501); it runs the same way anywhere else:
#   docker build -t arbiter .
#   docker run --rm -p 8501:8501 arbiter        # then open http://localhost:8501
FROM python:3.11-slim

# MALLOC_ARENA_MAX: glibc's heaps per process (serve.py and core/replicas.py set the same
# default; README "Measured" gives what it saved under load).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MALLOC_ARENA_MAX=2

# Spaces run the container as uid 1000; the app and its store belong to that user.
RUN useradd -m -u 1000 user

# HAProxy (Debian's 2.6) for `serve.py --replicas`: one Streamlit process per core behind it,
# each visitor kept on one replica by a cookie (README "Deploy").
RUN apt-get update \
    && apt-get install -y --no-install-recommends haproxy \
    && rm -rf /var/lib/apt/lists/*

# Runtime requirements only (no test tools), installed as root so the app cannot change them.
COPY requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir -r /tmp/requirements.txt && rm /tmp/requirements.txt

USER user
ENV HOME=/home/user
WORKDIR /home/user/app

COPY --chown=user . .

# Build the default store now, so the first visitor never waits for it.
RUN python -m core build --db data/arbiter.duckdb

EXPOSE 8501

# slim has no curl: ask Streamlit's health endpoint with the standard library (through
# HAProxy when there are replicas). serve.py computes every page's first view before the
# server answers (10-35 s on a shared two-core machine, each replica at once), so the first
# visitor waits on nothing; the start period leaves room for it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=3)"]

# --replicas=auto: one replica per core, at most 4 (one process on a one-core machine).
CMD ["python", "serve.py", "--replicas=auto", "--server.port=8501", "--server.address=0.0.0.0"]
