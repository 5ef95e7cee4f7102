"""S3 credentials that outlive a key rotation: a real S3 server (SeaweedFS, keys enforced), a
``credential_process`` that prints the key currently in a file, and the preprocess job (its own
driver and Python workers, publishing to S3) held mid-run (``DAILYSLICE_S3_HOLD``: an executor's
object reads after its first wait, with credentials in hand) while the test adds a new key,
rewrites the file and revokes the old key at the server. The held executor then reads, and the
driver (whose credentials are from before the rotation) publishes. With
``S3_CREDENTIALS=refreshing`` the run finishes and publishes the same pages as a run without
rotation; with static keys exported once, the same rotation fails it."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import shutil
import time

import boto3
import pytest
from botocore.config import Config

from devtools.seaweed import SeaweedS3
from tests.reliability import pipeline

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

FILES = ("dolma/sample-0000.warc.gz", "dolma/sample-0001.warc.gz", "ipwb/sample-1.warc.gz")
BUCKET = "rotate"
#: credentials printed with an Expiration 602 s ahead: botocore's mandatory refresh (600 s
#: before expiry) then fetches new ones before any signing more than 2 s after the last fetch
CREDENTIAL_SCRIPT = """#!/bin/sh
read -r KEY SECRET < "{keyfile}"
printf '{{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s", "Expiration": "%s"}}' \\
  "$KEY" "$SECRET" "$(date -u -d '+602 seconds' +%Y-%m-%dT%H:%M:%SZ)"
"""


def _refused(server: SeaweedS3, key: str, secret: str, timeout: float = 10) -> bool:
    """Whether the server refuses ``key`` (it picks identity changes up within a second)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probe = boto3.session.Session().client(
            "s3",
            endpoint_url=server.endpoint,
            region_name="us-east-1",
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"}),
        )
        try:
            probe.list_objects_v2(Bucket=BUCKET, MaxKeys=1)
        except probe.exceptions.ClientError as e:
            if e.response["Error"]["Code"] == "InvalidAccessKeyId":
                return True
        time.sleep(0.2)
    return False


def _pages(client, prefix: str, dest: pathlib.Path) -> list[str]:
    pipeline._download(client, BUCKET, prefix, dest)
    return pipeline._rows(sorted(dest.glob("language=*/*.parquet")))


def test_a_run_straddling_a_key_rotation_finishes_with_refreshing_credentials(
    tmp_path, corpus, spark, job_jvm_archive
) -> None:
    from jobs import preprocess

    # the reference: the same archives, read from a folder, no S3 and no rotation
    local = tmp_path / "local"
    for rel in FILES:
        dest = local / "warc" / pipeline.DAY / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / rel, dest)
    ref = preprocess.run(spark, preprocess.PreprocessOptions(date=pipeline.DATE, root=str(local)))
    assert ref.ok, ref.summary
    expected = pipeline._rows(sorted((local / "preprocessed" / pipeline.DAY).glob("language=*/*.parquet")))
    assert len(expected) > 50

    server = SeaweedS3(str(tmp_path / "weed")).start()
    try:
        server.add_key("seaweed", "seaweed-secret", user="admin")  # the test's own client
        server.add_key("key-1", "secret-1")
        assert _refused(server, "nobody", "x")  # from now on keys are enforced
        admin = server.client()
        admin.create_bucket(Bucket=BUCKET)
        root = pipeline.upload_day(admin, BUCKET, corpus, FILES)
        keyfile = tmp_path / "current-key"
        keyfile.write_text("key-1 secret-1\n")
        script = tmp_path / "credentials.sh"
        script.write_text(CREDENTIAL_SCRIPT.format(keyfile=keyfile))
        script.chmod(0o755)
        config = tmp_path / "aws-config"
        config.write_text(f"[default]\ncredential_process = {script}\nregion = us-east-1\n")
        base = pipeline.job_env({"AWS_ENDPOINT_URL": server.endpoint, "AWS_DEFAULT_REGION": "us-east-1"})
        base["PYTHONPATH"] = str(pipeline.REPO)  # this checkout's lib/, in the driver and its workers

        def run_through_rotation(env: dict[str, str], old: str, new: str, work: pathlib.Path) -> pipeline.JobRun:
            hold = tmp_path / f"hold-{new}"
            hold.touch()
            t0 = time.monotonic()
            proc = pipeline.start_job("preprocess", root, work, {**env, "DAILYSLICE_S3_HOLD": str(hold)})
            reached = pathlib.Path(f"{hold}.reached")
            while not reached.exists():
                assert proc.poll() is None, (
                    f"the job ended before it was held:\n{(work / 'preprocess.log').read_text()}"
                )
                assert time.monotonic() - t0 < 300, "the job was never held"
                time.sleep(0.1)
            # the rotation: a new key, the file the credential process reads, the old key revoked
            server.add_key(new, new.replace("key", "secret"))
            keyfile.write_text(f"{new} {new.replace('key', 'secret')}\n")
            server.revoke_key(old)
            assert _refused(server, old, old.replace("key", "secret"))
            time.sleep(2.5)  # the credentials fetched before the hold are now due for refresh
            hold.unlink()
            return pipeline.finish_job("preprocess", proc, work, t0)

        # static keys exported once into the job: the rotation under the run fails it
        static = run_through_rotation(
            {**base, "AWS_ACCESS_KEY_ID": "key-1", "AWS_SECRET_ACCESS_KEY": "secret-1"},
            "key-1",
            "key-2",
            tmp_path / "s",
        )
        assert static.rc != 0 and "InvalidAccessKeyId" in static.log, static.tail()
        assert "GetObject operation" in static.log  # the held executor's read was refused

        # refreshing credentials (the revoked static keys still exported: they must be ignored)
        env = {**base, "AWS_CONFIG_FILE": str(config), "S3_CREDENTIALS": "refreshing"}
        env.update(AWS_ACCESS_KEY_ID="key-1", AWS_SECRET_ACCESS_KEY="secret-1")
        run = run_through_rotation(env, "key-2", "key-3", tmp_path / "r")
        assert run.rc == 0, run.tail()
        held = {int(p) for p in pathlib.Path(f"{tmp_path}/hold-key-3.reached").read_text().split()}
        workers = {t["pid"] for t in run.summary["task_timing"]["tasks"]}
        assert held and held <= workers  # executors were held, and read again after the rotation
        assert _pages(admin, f"{pipeline.PREFIX}/preprocessed/{pipeline.DAY}", tmp_path / "published") == expected
        assert run.summary["pages_kept"] == ref.summary["pages_kept"] == len(expected)
    finally:
        server.stop()


def test_refreshing_mode_refuses_credentials_that_never_refresh(tmp_path, monkeypatch) -> None:
    from lib.store import s3

    (tmp_path / "static").write_text("[default]\naws_access_key_id = a\naws_secret_access_key = b\n")
    monkeypatch.setenv("S3_CREDENTIALS", "refreshing")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "static"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(s3.S3CredentialsError, match="never refreshes"):
        s3.session()
    script = tmp_path / "creds.sh"
    expiry = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = {"Version": 1, "AccessKeyId": "k", "SecretAccessKey": "s", "Expiration": expiry}
    script.write_text(f"#!/bin/sh\necho '{json.dumps(doc)}'\n")
    script.chmod(0o755)
    (tmp_path / "refreshing").write_text(f"[default]\ncredential_process = {script}\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "refreshing"))
    creds = s3.session().get_credentials()  # the environment's static keys (moto's) are passed over
    assert creds.method == "custom-process" and creds.get_frozen_credentials().access_key == "k"
    assert os.environ.get("AWS_ACCESS_KEY_ID")
