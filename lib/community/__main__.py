"""``dailyslice community``: check and publish the parties' pending uploads, show a party, print its S3 permissions.

    dailyslice community validate --root ROOT [--party NAME] [--json] [--datacenters FILE --data-center DC]
    dailyslice community status --root ROOT --party NAME
    dailyslice community policy --party NAME --bucket BUCKET [--prefix P] [--format seaweed|iam]

``validate`` exits 0 when every checked upload was accepted, 1 when one was refused (its reasons are
printed and written to ``community/<party>/verdicts/<upload>.json``), 2 on usage or configuration
errors. With ``--datacenters``, each accepted upload is also staged to every data center that
holds a copy of ``community`` (that file's ``replication``: docs/orchestration.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lib.community.accept import Replicate, party_state, process_all
from lib.community.access import COMMUNITY, PUBLISHED, iam_policy, seaweed_actions
from lib.errors import DailysliceError, UsageError
from lib.orchestration.datacenters import load_config
from lib.orchestration.runenv import s3_endpoint
from lib.orchestration.stage_outputs import stage_to_holders


def _replicator(path: str | None, dc: str | None) -> Replicate | None:
    """The stager of accepted uploads to the holders of ``community`` (None without a config)."""
    if path is None:
        return None
    cfgs = load_config(path)
    if dc not in cfgs:
        raise UsageError(f"--data-center {dc!r}: not a data center of {path} ({', '.join(cfgs)})")
    cfg = cfgs[dc]

    def replicate(local: str, party: str, upload: str) -> Any:
        sub = f"{COMMUNITY}/{party}/{PUBLISHED}/{upload}"
        return stage_to_holders(local, cfg, dc, COMMUNITY, sub, lambda spec: s3_endpoint(spec.get("endpoint")))

    return replicate


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="dailyslice community", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("validate", help="check every pending upload; publish the accepted ones")
    v.add_argument("--root", required=True, help="ROOT holding community/ (local folder or s3://bucket[/prefix])")
    v.add_argument("--party", help="only this party")
    v.add_argument("--json", action="store_true", help="the verdicts as one JSON document")
    v.add_argument("--datacenters", help="data-center config: stage accepted uploads to the holders of community/")
    v.add_argument("--data-center", help="this data center's name in --datacenters")
    s = sub.add_parser("status", help="a party's quota, published, refused and pending uploads (JSON)")
    s.add_argument("--root", required=True)
    s.add_argument("--party", required=True)
    a = sub.add_parser("policy", help="the S3 permissions of a party's key: its own folder only")
    a.add_argument("--party", required=True)
    a.add_argument("--bucket", required=True)
    a.add_argument("--prefix", default="", help="ROOT's prefix within the bucket")
    a.add_argument("--format", choices=("seaweed", "iam"), default="iam")
    args = p.parse_args(argv)
    try:
        if args.cmd == "policy":
            if args.format == "seaweed":
                print(",".join(seaweed_actions(args.bucket, args.prefix, args.party)))
            else:
                print(json.dumps(iam_policy(args.bucket, args.prefix, args.party), indent=1))
            return 0
        if args.cmd == "status":
            print(json.dumps(party_state(args.root, args.party), indent=1))
            return 0
        done = process_all(args.root, args.party, _replicator(args.datacenters, args.data_center))
    except DailysliceError as e:
        print(f"community: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(done, indent=1))
    else:
        for d in done:
            print(f"{d['party']}/{d['upload']}: {d['status']}" + "".join(f"\n  - {r}" for r in d["reasons"]))
        print(f"{len(done)} upload(s) checked, {sum(d['status'] == 'refused' for d in done)} refused")
    return 1 if any(d["status"] == "refused" for d in done) else 0


if __name__ == "__main__":
    sys.exit(main())
