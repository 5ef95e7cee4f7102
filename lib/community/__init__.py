"""Community spaces: ``ROOT/community/<party>/``, one folder per community or third party doing its own processing.

A party uploads its outputs (CIFF, Parquet metadata, graphs) into ``incoming/<upload>/`` with
credentials that reach only its own folder (:mod:`lib.community.access`), ``_manifest.json`` last.
The validator (:mod:`lib.community.uploads`: the CIFF validator, the metadata schema, the manifest's
sha256 per file, the party's quota) turns each pending upload into a verdict; an accepted upload is
copied, exactly as validated, into ``published/<upload>/`` with ``_SUCCESS`` last
(:mod:`lib.community.accept`), and only those folders are served (``lib.serve.community_api``);
``__main__`` is ``dailyslice community`` (validate, policy). docs/community.md.
"""
