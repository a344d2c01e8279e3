"""Process plumbing: the shared Prefect server, the warm worker, child processes, progress events and
state files shared under flock. Imports nothing else of tasks/.
"""
