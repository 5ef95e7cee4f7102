"""What a page row is: ``schema`` (its columns), ``weburls`` (URL ids and host parts), ``keyspace``
(MD5 key-space partitions), ``exclusions`` and ``exclude`` (the exclusion list, a day without its
excluded records), ``directives`` (robots directives, link rel, AI opt-outs a page states),
``robotstxt`` (the pages a host's robots.txt disallows), ``hostindex`` (a day's hosts by page file
and row group)."""
