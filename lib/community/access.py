"""A party's credentials reach its own folder only: the S3 permissions of one party.

Isolation is per prefix, inside the data center's bucket, not a bucket per party: ``community/``
sits under the same ROOT as the day folders (the design's one folder tree per data center), and
both SeaweedFS (identity actions scoped to ``bucket/prefix*``) and AWS-style IAM policies
(``arn:aws:s3:::bucket/prefix*`` resources, ``s3:prefix`` conditions) enforce a prefix. A party may
read and list ``community/<party>/`` (its uploads, what was published, the verdicts) and write
only ``community/<party>/incoming/``: the published copies and the verdicts are the validator's.
"""

from __future__ import annotations

import re
from typing import Any

from lib.errors import UsageError

COMMUNITY = "community"
INCOMING = "incoming"
PUBLISHED = "published"
VERDICTS = "verdicts"
PARTIES_FILE = "_parties.json"  # ROOT/community/_parties.json: the parties and their quotas

_PARTY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def check_party(name: str) -> str:
    """``name`` when it is a valid party name (lowercase letters, digits, ``-``, ``_``; it becomes
    a path part and an S3 prefix), else :class:`UsageError` saying why."""
    if not isinstance(name, str) or not _PARTY_RE.match(name):
        raise UsageError(
            f"party name {name!r}: use 1-63 lowercase letters, digits, '-' or '_' (first a letter or digit)"
        )
    return name


def party_prefix(prefix: str, party: str) -> str:
    """The key prefix of a party's folder within the bucket: ``[prefix/]community/<party>/``."""
    head = prefix.strip("/")
    return f"{head + '/' if head else ''}{COMMUNITY}/{check_party(party)}/"


def seaweed_actions(bucket: str, prefix: str, party: str) -> list[str]:
    """SeaweedFS identity actions (``weed shell s3.configure -actions``) of a party: read and list
    its folder, write its ``incoming/`` only."""
    own = f"{bucket}/{party_prefix(prefix, party)}"
    return [f"Read:{own}*", f"List:{own}*", f"Write:{own}{INCOMING}/*"]


def iam_policy(bucket: str, prefix: str, party: str) -> dict[str, Any]:
    """The same permissions as an AWS-style IAM policy (AWS, Ceph RGW, MinIO)."""
    own = party_prefix(prefix, party)
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ListOwnFolder",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": [f"arn:aws:s3:::{bucket}"],
                "Condition": {"StringLike": {"s3:prefix": [f"{own}*"]}},
            },
            {
                "Sid": "ReadOwnFolder",
                "Effect": "Allow",
                "Action": ["s3:GetObject"],
                "Resource": [f"arn:aws:s3:::{bucket}/{own}*"],
            },
            {
                "Sid": "WriteIncoming",
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                "Resource": [f"arn:aws:s3:::{bucket}/{own}{INCOMING}/*"],
            },
        ],
    }
