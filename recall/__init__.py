"""The recall wing: query understanding, one function per lane, fusion, rerank and hydration, over a Store."""
