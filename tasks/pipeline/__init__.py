"""The Prefect @task wrappers the flows call: short steps that each open the warehouse once (the flow's
process is its one writer) or judge one shard.
"""
