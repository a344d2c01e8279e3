"""The model client and what every call needs: the judge setup and its hash, requests, retries, rate
limits, costs and budget, answer verification, logprobs, secret scrubbing, shards landing as
Parquet, the Batch API path.
"""
