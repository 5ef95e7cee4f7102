"""Storage and the bucket layout: URIs, local and S3 access, atomic writes, leases."""
