"""A small script: recursion through different callers, a sort and a dict."""
import json


def depth(tree):
    return 1 + max((depth(c) for c in tree.get("kids", [])), default=0)


def build(n):
    return {"n": n, "kids": [build(n // 2), build(n // 3)] if n > 1 else []}


tree = build(200)
print(depth(tree), len(json.dumps(tree)), sorted(str(i) for i in range(300))[:3])
