"""docker-compose.yml: Qdrant's official image with persistent storage, and the app pointed at it.

No Docker engine runs here, so the file is parsed and its app environment is fed, as Compose would
interpolate it, to the same `Settings.from_env` the app runs: what the container would read is
checked, not just the text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rag.settings.config import Settings

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
_VAR = re.compile(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}")


def _interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}` rules."""

    def one(match: re.Match) -> str:
        name, op, arg = match.groups()
        if env.get(name):
            return env[name]
        if op == ":?":
            raise ValueError(f"{name} is required: {arg}")
        return arg or ""

    return _VAR.sub(one, str(value))


def _ports(service: dict) -> dict[int, str]:
    """container port -> the host side of its mapping."""
    out = {}
    for spec in service.get("ports", []):
        host, _, container = str(spec).rpartition(":")
        out[int(container)] = host
    return out


def _named_volume(service: dict, target: str) -> str:
    for spec in service.get("volumes", []):
        source, _, path = str(spec).partition(":")
        if path.split(":")[0] == target:
            assert source in (COMPOSE.get("volumes") or {}), f"{source} is not a declared named volume"
            return source
    raise AssertionError(f"no volume mounted at {target}")


def test_qdrant_is_the_official_image_with_both_ports_and_persistent_storage():
    qdrant = COMPOSE["services"]["qdrant"]
    assert re.fullmatch(r"qdrant/qdrant:v\d+\.\d+\.\d+", qdrant["image"]), "pin a release of the official image"
    ports = _ports(qdrant)
    assert {6333, 6334} <= set(ports)
    assert _named_volume(qdrant, "/qdrant/storage")


def test_app_points_at_qdrant_with_the_api_key_and_keeps_its_data():
    app = COMPOSE["services"]["app"]
    qdrant = COMPOSE["services"]["qdrant"]
    assert app["build"]["context"] == "." and (ROOT / app["build"]["dockerfile"]).is_file()
    assert "qdrant" in app["depends_on"]
    assert 8501 in _ports(app)
    data_dir = app["environment"]["RAGSCOPE_DATA_DIR"]
    assert _named_volume(app, data_dir)

    env = {"QDRANT_API_KEY": "k-123", "ANTHROPIC_API_KEY": "", "RAGSCOPE_PASSWORD": ""}
    app_env = {k: _interpolate(v, env) for k, v in app["environment"].items()}
    server_key = _interpolate(qdrant["environment"]["QDRANT__SERVICE__API_KEY"], env)
    settings = Settings.from_env(app_env, secrets_path=ROOT / "no-such-secrets.toml")
    assert settings.backend == "server"
    assert settings.qdrant_url == "http://qdrant:6333"
    assert settings.qdrant_api_key.value == server_key == "k-123"  # the key the server enforces
    assert settings.data_dir == Path(data_dir)
    assert not settings.anthropic_api_key and not settings.password  # optional ones pass through empty

    with pytest.raises(ValueError, match="QDRANT_API_KEY is required"):
        _interpolate(app["environment"]["QDRANT_API_KEY"], {})


def test_dockerfile_builds_the_app_as_the_compose_file_expects():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    assert "pip install -e ." in text
    assert re.search(r'^CMD \["streamlit", "run", "app\.py".*"--server\.port=8501"', text, re.M)
    assert re.search(r"^EXPOSE 8501$", text, re.M)
    data_dir = COMPOSE["services"]["app"]["environment"]["RAGSCOPE_DATA_DIR"]
    assert f"RAGSCOPE_DATA_DIR={data_dir}" in text
    assert "HF_HUB_OFFLINE=1" in text  # the default models ship in packages; the container never needs a hub


CLUSTER_NODES = ("qdrant-node1", "qdrant-node2", "qdrant-node3")


def _command(service: dict) -> str:
    """The node's command line as the shell would run it (a list, or `bash -c "..."`)."""
    command = service["command"]
    return command[-1] if command[:2] == ["bash", "-c"] else " ".join(command)


def test_the_cluster_profile_is_three_qdrant_nodes_that_form_one_cluster():
    services = COMPOSE["services"]
    cluster = {name for name, s in services.items() if "cluster" in s.get("profiles", [])}
    assert cluster == {*CLUSTER_NODES, "app-cluster"}
    assert not services["qdrant"].get("profiles") and not services["app"].get("profiles")  # plain `up` unchanged
    env = {"QDRANT_API_KEY": "k-123"}
    volumes = set()
    for name in CLUSTER_NODES:
        node = services[name]
        assert node["image"] == services["qdrant"]["image"]  # the single node's pinned release
        assert node["environment"]["QDRANT__CLUSTER__ENABLED"] == "true"
        assert _interpolate(node["environment"]["QDRANT__SERVICE__API_KEY"], env) == "k-123"
        args = _command(node).split()
        assert args[args.index("--uri") + 1] == f"http://{name}:6335"  # its own peer-to-peer address
        if name != "qdrant-node1":
            assert args[args.index("--bootstrap") + 1] == "http://qdrant-node1:6335"
            assert "qdrant-node1" in node["depends_on"]
        else:
            assert "--bootstrap" not in args
        volumes.add(_named_volume(node, "/qdrant/storage"))
    assert len(volumes) == 3 and "qdrant_storage" not in volumes  # each node its own storage


def test_the_cluster_app_points_at_node_1_and_lays_out_new_collections_over_the_nodes():
    services = COMPOSE["services"]
    app = services["app-cluster"]
    assert set(CLUSTER_NODES) <= set(app["depends_on"])
    assert _ports(app)[8501] != _ports(services["app"])[8501]  # both apps can run at once
    node1 = _ports(services["qdrant-node1"])
    assert node1[6333] != _ports(services["qdrant"])[6333] and node1[6333].startswith("127.0.0.1:")
    assert _named_volume(app, app["environment"]["RAGSCOPE_DATA_DIR"]) != _named_volume(services["app"], "/data")

    env = {"QDRANT_API_KEY": "k-123"}
    app_env = {k: _interpolate(v, env) for k, v in app["environment"].items()}
    settings = Settings.from_env(app_env, secrets_path=ROOT / "no-such-secrets.toml")
    assert settings.qdrant_url == "http://qdrant-node1:6333" and settings.qdrant_api_key.value == "k-123"
    cluster = settings.cluster
    assert (cluster.shards, cluster.replicas, cluster.write_consistency) == (6, 2, 1)
    assert cluster.read_consistency == "majority"
    assert cluster.replicas <= len(CLUSTER_NODES)  # every copy of a shard on a node of its own
    overridden = {k: _interpolate(v, env | {"RAGSCOPE_SHARDS": "3"}) for k, v in app["environment"].items()}
    assert Settings.from_env(overridden, secrets_path=ROOT / "no-such-secrets.toml").cluster.shards == 3
