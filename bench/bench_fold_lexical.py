"""The lexical side of a fold at 100k rows: the sparse shard built again vs extended.

Run (heavy: take the CPU lock):
  python bench/bench_fold_lexical.py --generation GEN --work DIR [--share 0.1]

GEN is a generation folder of a large source (e.g. the 100k source of
`bench/bench_scale.py`); its base records are read once. The first rows, all but a
`--share` of them, stand for the base a source was last written with: their sparse index
is saved in DIR/previous/lexical (setup, timed apart). The rest stand for the rows the
delta collected until the add that folds it in. Then, as `prefrag index` writes the folded
generation's `lexical/`:

- before: `SparseLexicalIndex.build` over every row's title and text, then `save`;
- after: `ingest._extended_lexical` (the rows past the base tokenised at the base's mean
  length) and its writer (`sparse_lexical.extend`: the shard copied, the rows upserted).

Each is timed (wall and CPU of this process; the Qdrant Edge shard's own threads count in
wall only). 200 seeded queries (titles of rows, first five words) are asked of both
indexes: how many share their top 10, and how often the row whose title was asked is first.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path


def _timed(step, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = step(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    from prefrag.index import docstore, ingest
    from prefrag.index.lexical import record_texts
    from prefrag.index.sparse_lexical import SparseLexicalIndex

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generation", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--share", type=float, default=0.1)
    args = parser.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    records = docstore.load_records(Path(args.generation))
    base = int(len(records) / (1 + args.share))
    texts = record_texts(records)
    result: dict = {"rows": len(records), "base": base, "added": len(records) - base}

    def build(rows, folder):
        index = SparseLexicalIndex.build(rows)
        index.save(folder)

    _, result["setup_base_build_s"], _ = _timed(build, texts[:base], work / "previous" / "lexical")
    _, result["before_wall_s"], result["before_cpu_s"] = _timed(build, texts, work / "rebuilt")

    def extend():
        writer = ingest._extended_lexical(work / "previous", records)
        assert writer is not None, "the fold would build the shard again (mean length moved)"
        writer(work / "extended")

    _, result["after_wall_s"], result["after_cpu_s"] = _timed(extend)
    rebuilt = SparseLexicalIndex.load(work / "rebuilt")
    extended = SparseLexicalIndex.load(work / "extended")
    rows = random.Random(0).sample(range(len(records)), 200)
    same, first_rebuilt, first_extended = 0, 0, 0
    for row in rows:
        query = " ".join(str(records[row].get("title", "")).split()[:5]) or records[row]["text"]
        a = [hit for hit, _ in rebuilt.search(query, 10)]
        b = [hit for hit, _ in extended.search(query, 10)]
        same += a == b
        first_rebuilt += bool(a) and a[0] == row
        first_extended += bool(b) and b[0] == row
    result.update(
        same_top10=same / len(rows),
        asked_row_first_rebuilt=first_rebuilt / len(rows),
        asked_row_first_extended=first_extended / len(rows),
        mean_length_base=extended.average_length,
        mean_length_rebuilt=rebuilt.average_length,
    )
    rebuilt.close()
    extended.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
