"""A party's own key against a real S3 server (SeaweedFS on loopback, identities enforced): it writes its
``incoming/`` and reads its own folder, and is refused everything else; the validator (the operator's
key) publishes the upload, and the service serves it from S3 and shows a refusal, over real HTTP."""

from __future__ import annotations

import json
import urllib.request

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from devtools.seaweed import SeaweedS3
from lib.community import accept
from lib.community.access import seaweed_actions
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from lib.store import s3
from tests.community.helpers_uploads import make_upload

BUCKET = "crawl"
ADMIN = ("operator-key", "operator-secret")
KEYS = {"alpha": ("alpha-key", "alpha-secret"), "beta": ("beta-key", "beta-secret")}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """SeaweedFS with an operator identity (everything) and one identity per party (its folder only)."""
    srv = SeaweedS3(str(tmp_path_factory.mktemp("seaweed-community")))
    srv.start()
    try:
        srv.client().create_bucket(Bucket=BUCKET)
        srv.add_key(*ADMIN, user="operator")
        for party, (key, secret) in KEYS.items():
            actions = ",".join(seaweed_actions(BUCKET, "", party))
            srv.shell(f"s3.configure -user {party} -access_key {key} -secret_key {secret} -actions {actions} -apply")
        yield srv
    finally:
        srv.kill()  # SeaweedFS takes ~25 s to leave after SIGTERM; its data folder is the test's


def _client(server: SeaweedS3, key: tuple[str, str]):
    return boto3.session.Session().client(
        "s3",
        endpoint_url=server.endpoint,
        region_name="us-east-1",
        aws_access_key_id=key[0],
        aws_secret_access_key=key[1],
        config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"}),
    )


@pytest.fixture
def operator_env(server, monkeypatch):
    """The pipeline's S3 client (lib.store.s3) on the operator's key."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ADMIN[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ADMIN[1])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3.reset()
    yield _client(server, ADMIN)
    s3.reset()


def _denied(call) -> str:
    with pytest.raises(ClientError) as e:
        call()
    return e.value.response["Error"]["Code"]


def _upload(client, tmp_path, party: str, upload: str, **kw) -> dict:
    folder = tmp_path / upload
    manifest = make_upload(folder, **kw)
    for p in sorted(folder.rglob("*"), key=lambda p: p.name == "_manifest.json"):  # the manifest last
        if p.is_file():
            key = f"community/{party}/incoming/{upload}/{p.relative_to(folder).as_posix()}"
            client.put_object(Bucket=BUCKET, Key=key, Body=p.read_bytes())
    return manifest


def test_a_partys_key_reaches_its_own_folder_only(server, operator_env, tmp_path) -> None:
    admin = operator_env
    admin.put_object(Bucket=BUCKET, Key="index/2026-01/15/_SUCCESS", Body=b"day")
    admin.put_object(Bucket=BUCKET, Key="community/beta/published/b1/x.parquet", Body=b"beta's")
    alpha = _client(server, KEYS["alpha"])
    _upload(alpha, tmp_path, "alpha", "u1")  # its own incoming/: allowed
    own = alpha.list_objects_v2(Bucket=BUCKET, Prefix="community/alpha/")
    assert own["KeyCount"] == 4
    assert alpha.get_object(Bucket=BUCKET, Key="community/alpha/incoming/u1/_manifest.json")["Body"].read()
    refused = {
        "write another party's folder": lambda: alpha.put_object(
            Bucket=BUCKET, Key="community/beta/incoming/x", Body=b"x"
        ),
        "read another party's folder": lambda: alpha.get_object(
            Bucket=BUCKET, Key="community/beta/published/b1/x.parquet"
        ),
        "list another party's folder": lambda: alpha.list_objects_v2(Bucket=BUCKET, Prefix="community/beta/"),
        "read a day folder": lambda: alpha.get_object(Bucket=BUCKET, Key="index/2026-01/15/_SUCCESS"),
        "overwrite a day folder": lambda: alpha.put_object(Bucket=BUCKET, Key="index/2026-01/15/_SUCCESS", Body=b""),
        "delete a day folder's file": lambda: alpha.delete_object(Bucket=BUCKET, Key="index/2026-01/15/_SUCCESS"),
        "list the bucket": lambda: alpha.list_objects_v2(Bucket=BUCKET),
        "publish its own upload": lambda: alpha.put_object(
            Bucket=BUCKET, Key="community/alpha/published/u1/_SUCCESS", Body=b""
        ),
        "write its own verdict": lambda: alpha.put_object(
            Bucket=BUCKET, Key="community/alpha/verdicts/u1.json", Body=b"{}"
        ),
        "change the quotas": lambda: alpha.put_object(Bucket=BUCKET, Key="community/_parties.json", Body=b"{}"),
        "copy a day file into its folder": lambda: alpha.copy_object(
            Bucket=BUCKET,
            Key="community/alpha/incoming/u9/x",
            CopySource={"Bucket": BUCKET, "Key": "index/2026-01/15/_SUCCESS"},
        ),
    }
    codes = {what: _denied(call) for what, call in refused.items()}
    assert codes == dict.fromkeys(refused, "AccessDenied")
    assert admin.get_object(Bucket=BUCKET, Key="index/2026-01/15/_SUCCESS")["Body"].read() == b"day"


def test_uploads_checked_published_and_served_from_s3(server, operator_env, tmp_path) -> None:
    admin = operator_env
    admin.put_object(
        Bucket=BUCKET,
        Key="community/_parties.json",
        Body=json.dumps({"parties": {"alpha": {"quota_bytes": None}, "beta": {}}}),
    )
    alpha, beta = _client(server, KEYS["alpha"]), _client(server, KEYS["beta"])
    manifest = _upload(alpha, tmp_path / "a", "alpha", "u2")
    _upload(beta, tmp_path / "b", "beta", "bad", unknown_column=True)
    verdicts = {(v["party"], v["upload"]): v for v in accept.process_all(f"s3://{BUCKET}")}
    assert verdicts[("alpha", "u2")]["status"] == "accepted", verdicts
    assert verdicts[("beta", "bad")]["status"] == "refused"
    keys = {o["Key"] for o in alpha.list_objects_v2(Bucket=BUCKET, Prefix="community/alpha/published/u2/")["Contents"]}
    assert keys == {f"community/alpha/published/u2/{r}" for r in [*manifest["files"], "_manifest.json", "_SUCCESS"]}
    # the party reads why its upload was refused, with its own key
    why = json.loads(beta.get_object(Bucket=BUCKET, Key="community/beta/verdicts/bad.json")["Body"].read())
    assert any("sentiment" in r for r in why["reasons"])
    assert "community/beta/published/bad/_SUCCESS" not in {
        o["Key"] for o in admin.list_objects_v2(Bucket=BUCKET, Prefix="community/beta/").get("Contents", [])
    }

    app = create_app({"dc1": f"s3://{BUCKET}"}, cache_dir=str(tmp_path / "cache"))
    with ServerThread(app) as srv:
        listing = json.load(urllib.request.urlopen(f"{srv.url}/community"))
        counts = {p["party"]: (p["published"], p["refused"]) for p in listing["parties"]}
        assert counts["beta"] == (0, 1) and counts["alpha"][0] >= 1, counts  # alpha: u2 (and u1 when run before)
        state = json.load(urllib.request.urlopen(f"{srv.url}/community/dc1/alpha"))
        assert "u2" in [p["upload"] for p in state["published"]] and state["refused"] == []
        rel = "ciff/index-0.ciff.gz"
        with urllib.request.urlopen(f"{srv.url}/community/dc1/alpha/u2/files/{rel}") as r:
            assert r.headers["ETag"] == f'"{manifest["files"][rel]["sha256"]}"'
            assert r.read() == (tmp_path / "a" / "u2" / rel).read_bytes()
        page = urllib.request.urlopen(f"{srv.url}/community/dc1/beta/page").read().decode()
        assert "unknown column(s) sentiment" in page and "Published</h2><p>none" in page
        for path in (
            "/community/dc1/beta/bad/files/metadata/metadata-0.parquet",
            "/community/dc1/alpha/u2/files/_SUCCESS",
        ):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(srv.url + path)
            assert e.value.code == 404
