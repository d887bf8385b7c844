"""The corpus stores of ``audiokit batch --store npy|shards|kaldi|parquet`` (see :mod:`.options` for the table).

:mod:`.options` (what was asked), :mod:`.layout` (file names and container writers per store), :mod:`.plan`
(which inputs go into which shard, resume per shard), :mod:`.work` (a worker's task: utterances into members),
:mod:`.description` (``store.json``: how the arrays were made, once), :mod:`.index` (``index.sqlite`` and the
statistics journal), :mod:`.views` (the other toolkits' index files: Kaldi tables, ESPnet, Lhotse),
:mod:`.lhotse` (Lhotse's manifests), :mod:`.session` (the client's side of a run: take the store, plan, keep the
statistics, write the indexes), :mod:`.reader` (``audiokit.corpus.open`` of a store).
"""

from .options import ARRAY_STORES, SHARDED_STORES, STORES, StoreOptions

__all__ = ["ARRAY_STORES", "SHARDED_STORES", "STORES", "StoreOptions"]
