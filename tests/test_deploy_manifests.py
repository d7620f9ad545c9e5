"""The multi-machine deploy files hold together (issue 24): ``deploy/compose.yaml`` (app
containers behind HAProxy), ``deploy/haproxy.cfg`` (that proxy's configuration) and
``deploy/kubernetes.yaml`` (Deployment, Service, Ingress).

Docker and a cluster are not on the test machines, so the YAML is parsed and its properties
checked; HAProxy is (Debian's ``haproxy`` package, 2.6, as in the image), so ``haproxy -c``
checks the configuration for real. They must name the same health check and the same
stickiness cookie as ``serve.py --replicas`` (``core/replicas.py``), and the port the
Dockerfile exposes.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from core.replicas import COOKIE, HEALTH_PATH

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
HAPROXY_CFG = DEPLOY / "haproxy.cfg"
KUBERNETES = DEPLOY / "kubernetes.yaml"
#: Streamlit reads ``server.cookieSecret`` from this variable (a "sensitive" option).
SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"


# -- parsing helpers ---------------------------------------------------------------------------

def _seconds(value: str | int) -> float:
    """A duration as compose and HAProxy write it (``90``, ``1m30s``, ``1h``, ``500ms``)."""
    text = str(value).strip()
    if re.fullmatch(r"\d+", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|s|m|h|d)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a duration: {text!r}"
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(float(n) * scale[u] for n, u in parts)


def _bytes(value: str) -> int:
    """A size: Kubernetes quantities (``1Gi``, ``1536Mi``), compose (``1G``, ``1536M``) and
    nginx (``21m``) all read as powers of 1024."""
    m = re.fullmatch(r"(\d+)([kKmMgG]i?)?[bB]?", str(value).strip())
    assert m, f"not a size: {value!r}"
    unit = (m.group(2) or "").lower().rstrip("i")
    return int(m.group(1)) * 1024 ** {"": 0, "k": 1, "m": 2, "g": 3}[unit]


def _haproxy_sections(text: str) -> dict[str, list[list[str]]]:
    """``{"defaults": [[word, …], …], "backend replicas": …}``: comments dropped."""
    heads = ("global", "defaults", "frontend", "backend", "listen", "resolvers")
    sections: dict[str, list[list[str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        words = line.split()
        if not raw[0].isspace():
            assert words[0] in heads, f"unknown section {line!r}"
            current = " ".join(words)
            assert current not in sections, f"section {current!r} twice"
            sections[current] = []
        else:
            assert current is not None, f"{line!r} outside a section"
            sections[current].append(words)
    return sections


def _directives(lines: list[list[str]], *head: str) -> list[list[str]]:
    return [w for w in lines if w[:len(head)] == list(head)]


def _one(lines: list[list[str]], *head: str) -> list[str]:
    found = _directives(lines, *head)
    assert len(found) == 1, f"{' '.join(head)!r}: {len(found)} lines, expected 1"
    return found[0]


def _dockerfile_exposed_port() -> int:
    exposed = [ln.split()[1:] for ln in (ROOT / "Dockerfile").read_text(encoding="utf-8")
               .splitlines() if ln.strip().upper().startswith("EXPOSE ")]
    assert len(exposed) == 1 and len(exposed[0]) == 1
    return int(exposed[0][0].split("/")[0])


def _option(argv: list[str], name: str) -> str:
    """``--name=value`` or ``--name value`` from an argument list."""
    for i, arg in enumerate(argv):
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
        if arg == name:
            return argv[i + 1]
    raise AssertionError(f"{name} not in {argv}")


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compose() -> dict:
    docs = list(yaml.safe_load_all(COMPOSE.read_text(encoding="utf-8")))
    assert len(docs) == 1 and isinstance(docs[0], dict)
    return docs[0]


@pytest.fixture(scope="module")
def app(compose) -> dict:
    return compose["services"]["app"]


@pytest.fixture(scope="module")
def proxy(compose) -> dict:
    return compose["services"]["proxy"]


@pytest.fixture(scope="module")
def haproxy() -> dict[str, list[list[str]]]:
    return _haproxy_sections(HAPROXY_CFG.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def backend(haproxy) -> list[list[str]]:
    frontends = [k for k in haproxy if k.startswith("frontend ")]
    assert len(frontends) == 1
    name = _one(haproxy[frontends[0]], "default_backend")[1]
    return haproxy[f"backend {name}"]


@pytest.fixture(scope="module")
def k8s() -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all(KUBERNETES.read_text(encoding="utf-8")) if d]
    kinds = [d["kind"] for d in docs]
    assert sorted(kinds) == ["Deployment", "Ingress", "Service"], kinds
    return {d["kind"]: d for d in docs}


@pytest.fixture(scope="module")
def container(k8s) -> dict:
    containers = k8s["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


@pytest.fixture(scope="module")
def container_port(container) -> int:
    ports = container["ports"]
    assert len(ports) == 1
    return ports[0]["containerPort"]


def _app_port(app: dict) -> int:
    """The port the compose app service's server listens on (its command), which must be
    the port it exposes."""
    port = int(_option(app["command"], "--server.port"))
    assert [int(str(p).split("/")[0]) for p in app["expose"]] == [port]
    return port


# -- compose -----------------------------------------------------------------------------------

def test_compose_app_is_built_from_the_repository_dockerfile(app):
    context = (COMPOSE.parent / app["build"]["context"]).resolve()
    assert context == ROOT
    assert (context / app["build"].get("dockerfile", "Dockerfile")).is_file()


def test_compose_app_runs_one_server_per_container_on_the_image_port(app):
    argv = app["command"]
    assert argv[:2] == ["python", "serve.py"]
    assert _option(argv, "--replicas") == "1"
    assert _option(argv, "--server.address") == "0.0.0.0"
    assert _app_port(app) == _dockerfile_exposed_port()
    assert app["deploy"]["replicas"] >= 2
    assert "ports" not in app, "the app is reached through the proxy only"


def test_compose_every_replica_gets_the_one_required_cookie_secret(app):
    value = app["environment"][SECRET_ENV]
    # ${VAR:?message}: compose refuses to start without it; no secret is committed
    assert re.fullmatch(r"\$\{ARBITER_COOKIE_SECRET:\?[^}]+\}", value), value


def test_compose_app_file_system_is_read_only_but_tmp(app):
    assert app["read_only"] is True
    assert [t.split(":", 1)[0] for t in app["tmpfs"]] == ["/tmp"]
    assert not app.get("volumes"), "the store comes from the image, read-only"


def test_compose_healthcheck_asks_the_health_endpoint_with_the_standard_library(app):
    check = app["healthcheck"]
    test = check["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    assert f"http://127.0.0.1:{_app_port(app)}{HEALTH_PATH}" in test[3]
    compile(test[3], "<healthcheck>", "exec")
    assert "urllib.request" in test[3]
    # serve.py prepares every page (10-35 s on two cores) before the server answers
    assert _seconds(check["start_period"]) >= 120
    assert _seconds(check["timeout"]) < _seconds(check["interval"])


def test_compose_memory_limit_is_the_per_replica_budget(app, container):
    limits = app["deploy"]["resources"]["limits"]["memory"]
    assert _bytes(limits) == _bytes(container["resources"]["limits"]["memory"])


def test_compose_proxy_mounts_the_checked_haproxy_cfg(proxy):
    assert proxy["image"] == "haproxy:2.6"  # the version `haproxy -c` below checks with
    mounts = proxy["volumes"]
    assert len(mounts) == 1
    mount = mounts[0]
    assert (COMPOSE.parent / mount["source"]).resolve() == HAPROXY_CFG.resolve()
    assert mount["target"] == "/usr/local/etc/haproxy/haproxy.cfg"  # the image's default
    assert mount["read_only"] is True


def test_compose_proxy_publishes_its_frontend_and_waits_for_healthy_apps(proxy, haproxy):
    (frontend,) = [v for k, v in haproxy.items() if k.startswith("frontend ")]
    bind_port = int(_one(frontend, "bind")[1].rsplit(":", 1)[1])
    published = [str(p).split(":") for p in proxy["ports"]]
    assert published == [[str(bind_port), str(bind_port)]]
    assert proxy["depends_on"] == {"app": {"condition": "service_healthy"}}


# -- haproxy.cfg ---------------------------------------------------------------------------

def test_haproxy_balances_and_sticks_like_serve_replicas(backend, haproxy):
    assert _one(backend, "balance") == ["balance", "leastconn"]
    cookie = _one(backend, "cookie")
    assert cookie[1] == COOKIE
    # "dynamic": template servers have no fixed cookie value; it comes from their address
    assert {"insert", "indirect", "nocache", "httponly", "dynamic"} <= set(cookie[2:])
    key = _one(backend, "dynamic-cookie-key")
    assert len(key) == 2 and key[1]
    defaults = haproxy["defaults"]
    assert ["option", "redispatch"] in defaults + backend
    assert ["mode", "http"] in defaults


def test_haproxy_health_check_and_websocket_timeout(backend, haproxy):
    assert _one(backend, "option", "httpchk") == ["option", "httpchk", "GET", HEALTH_PATH]
    assert _one(backend, "http-check", "expect") == ["http-check", "expect", "status", "200"]
    timeouts = {w[1]: _seconds(w[2]) for w in _directives(haproxy["defaults"], "timeout")}
    assert timeouts["tunnel"] >= 3600  # a page is one long websocket
    assert {"connect", "client", "server"} <= timeouts.keys()


def test_haproxy_finds_the_compose_app_containers_through_docker_dns(backend, haproxy, compose,
                                                                     app):
    (template,) = _directives(backend, "server-template")
    host, port = template[3].rsplit(":", 1)
    assert host in compose["services"] and compose["services"][host] is app
    assert int(port) == _app_port(app)
    slots = int(template[2].split("-")[-1])
    assert slots >= app["deploy"]["replicas"]
    server_words = template[4:] + _one(backend, "default-server")[1:]
    assert "check" in server_words
    resolvers = server_words[server_words.index("resolvers") + 1]
    assert ["nameserver", "dns", "127.0.0.11:53"] in haproxy[f"resolvers {resolvers}"]
    # HAProxy starts before the app containers exist (depends_on aside, on a restart)
    assert server_words[server_words.index("init-addr") + 1] == "none"


def test_haproxy_accepts_the_configuration():
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.fail("haproxy is not installed: install Debian's package "
                    "(apt-get install haproxy, HAProxy 2.6) to check deploy/haproxy.cfg")
    done = subprocess.run([haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True,
                          text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "[WARNING]" not in out and "[ALERT]" not in out, out


# -- kubernetes ----------------------------------------------------------------------------

def test_k8s_deployment_runs_the_compose_command_on_the_image_port(k8s, container,
                                                                   container_port, app):
    assert k8s["Deployment"]["spec"]["replicas"] >= 2
    assert container["command"] == app["command"]
    assert container_port == _dockerfile_exposed_port() == _app_port(app)
    assert container["image"]


@pytest.mark.parametrize("probe", ["startupProbe", "readinessProbe", "livenessProbe"])
def test_k8s_probes_ask_the_health_endpoint_on_the_container_port(container, container_port,
                                                                  probe):
    get = container[probe]["httpGet"]
    assert get["path"] == HEALTH_PATH
    assert get["port"] in (container_port, container["ports"][0].get("name"))


def test_k8s_startup_probe_waits_for_the_page_warm_up(container):
    probe = container["startupProbe"]
    allowed = probe.get("initialDelaySeconds", 0) + probe["periodSeconds"] * probe[
        "failureThreshold"]
    assert allowed >= 180, f"{allowed} s: serve.py prepares every page before it answers"


def test_k8s_pod_is_uid_1000_read_only_with_a_writable_tmp(k8s, container):
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 1000  # Dockerfile: useradd -u 1000 user
    assert re.search(r"useradd\b.*-u 1000\b", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert set(mounts) == {"/tmp"}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]


def test_k8s_memory_request_and_limit(container):
    resources = container["resources"]
    request = _bytes(resources["requests"]["memory"])
    limit = _bytes(resources["limits"]["memory"])
    assert 512 * 2**20 <= request <= limit <= 4 * 2**30


def test_k8s_cookie_secret_comes_from_a_secret_not_from_the_file(k8s, container):
    env = {e["name"]: e for e in container["env"]}
    ref = env[SECRET_ENV]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == "arbiter-cookie-secret" and ref["key"]
    assert "value" not in env[SECRET_ENV]
    text = KUBERNETES.read_text(encoding="utf-8")
    assert f"kubectl create secret generic {ref['name']}" in text  # how to make it
    assert f"--from-literal={ref['key']}=" in text


def test_k8s_service_selects_the_pods_and_targets_the_container_port(k8s, container,
                                                                    container_port):
    deployment, service = k8s["Deployment"], k8s["Service"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    spec = service["spec"]
    assert spec["selector"] and spec["selector"].items() <= pod_labels.items()
    assert spec.get("type", "ClusterIP") == "ClusterIP"
    (port,) = spec["ports"]
    assert port["targetPort"] in (container_port, container["ports"][0].get("name"))
    assert spec["sessionAffinity"] == "ClientIP"
    assert spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] >= 3600


def test_k8s_ingress_routes_to_the_service_with_cookie_affinity(k8s):
    ingress, service = k8s["Ingress"], k8s["Service"]
    backends = [p["backend"]["service"] for rule in ingress["spec"]["rules"]
                for p in rule["http"]["paths"]]
    assert backends
    (port,) = service["spec"]["ports"]
    for backend in backends:
        assert backend["name"] == service["metadata"]["name"]
        assert backend["port"] in ({"number": port["port"]}, {"name": port.get("name")})
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie"
    assert notes[prefix + "session-cookie-name"] == COOKIE
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[prefix + timeout]) >= 3600  # websockets


def test_k8s_ingress_lets_the_largest_upload_through(k8s):
    """ingress-nginx refuses bodies over 1 MiB by default; the uploaders accept 20 MiB."""
    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    max_upload = conf["server"]["maxUploadSize"] * 2**20
    notes = k8s["Ingress"]["metadata"]["annotations"]
    assert _bytes(notes["nginx.ingress.kubernetes.io/proxy-body-size"]) > max_upload


# -- one health check, one cookie, everywhere ----------------------------------------------

def _compose_health(c, h, k):
    return re.findall(r"http://127\.0\.0\.1:\d+(/[^'\"]*)",
                      c["services"]["app"]["healthcheck"]["test"][3])


def _dockerfile_health(c, h, k):
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    return re.findall(r"http://127\.0\.0\.1:\d+(/[^'\"]*)", text)


def _haproxy_health(c, h, k):
    return [w[3] for sec in h.values() for w in sec if w[:2] == ["option", "httpchk"]]


def _k8s_health(c, h, k):
    pod = k["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    return sorted({pod[p]["httpGet"]["path"] for p in ("startupProbe", "readinessProbe",
                                                        "livenessProbe")})


def _haproxy_cookie(c, h, k):
    return [w[1] for sec in h.values() for w in sec if w[0] == "cookie"]


def _k8s_cookie(c, h, k):
    notes = k["Ingress"]["metadata"]["annotations"]
    return [v for n, v in notes.items() if n.endswith("/session-cookie-name")]


#: (what, where, reader(compose, haproxy sections, kubernetes documents) -> the names found)
SAME_EVERYWHERE = [
    ("health", "Dockerfile HEALTHCHECK", _dockerfile_health),
    ("health", "compose app healthcheck", _compose_health),
    ("health", "haproxy.cfg httpchk", _haproxy_health),
    ("health", "kubernetes probes", _k8s_health),
    ("cookie", "haproxy.cfg cookie", _haproxy_cookie),
    ("cookie", "kubernetes ingress", _k8s_cookie),
]


@pytest.mark.parametrize(("what", "where", "read"), SAME_EVERYWHERE,
                         ids=[f"{w}-{p}" for w, p, _ in SAME_EVERYWHERE])
def test_one_health_path_and_one_cookie_name_everywhere(compose, haproxy, k8s, what, where,
                                                        read):
    expected = {"health": HEALTH_PATH, "cookie": COOKIE}[what]
    assert read(compose, haproxy, k8s) == [expected], where


def test_usage_comments_name_the_files_by_their_repository_paths():
    """The commands in the files' opening comments (``… -f deploy/compose.yaml …``) work from
    the repository's root."""
    for path in (COMPOSE, KUBERNETES):
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(ROOT).as_posix()
        commands = [shlex.split(ln.lstrip("# ").strip()) for ln in text.splitlines()
                    if ln.lstrip().startswith("#") and (" -f " in ln)]
        assert commands, f"{relative} says how to use it"
        for argv in commands:
            assert _option(argv, "-f") == relative
