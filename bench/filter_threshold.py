import json, numpy as np
from prefrag.index.embeddings import get_embedder
e = get_embedder()
rows = [json.loads(l) for l in open("../shared/data/hotpotqa/hotpotqa_dev_350.jsonl")][:200]
gold, other = [], []
for r in rows:
    q = r["question_text"]
    texts = [c["title"] + ". " + c["paragraph_text"] for c in r["contexts"]]
    v = e.encode([q] + texts)
    sims = v[1:] @ v[0]
    for c, s in zip(r["contexts"], sims):
        (gold if c["is_supporting"] else other).append(float(s))
gold, other = np.array(gold), np.array(other)
print("gold", np.percentile(gold,[5,10,25,50]), "other", np.percentile(other,[50,75,90,95]))
for t in [0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4]:
    tp=(gold>=t).sum(); fp=(other>=t).sum(); fn=(gold<t).sum()
    p=tp/(tp+fp); r=tp/(tp+fn)
    print(t, "prec %.3f rec %.3f f1 %.3f drop_other %.3f"%(p,r,2*p*r/(p+r),(other<t).mean()))
