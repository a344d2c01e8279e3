"""Rubrics as rewards for a training loop (#55): the reward server's parts that need no judge of
their own: what a rollout's text is (`rollouts`), the screens that zero judge-fooling rollouts before
any call (`guard`), the fooling goldens every reward rubric is tried on (`fooling`), the cache that
never buys one rollout twice (`cache`), the warehouse ledger of every judgment (`ledger`) and the
owner-only HTTP face (`http`). The service that judges is `rubricflow/api_reward.py`."""
