"""What a page row is: its schema, URL ids and host parts, key space and exclusions."""
