"""`rubricflow reward-server`: rubrics as rewards for a training loop, served over HTTP (#55)."""

from __future__ import annotations

from pathlib import Path

import typer

from rubricflow.errors import InputError

from .common import judge_settings
from .judge_options import judge_options


# No --budget (a reward outside a scoring run has no ledger to spend from: refused, not ignored), and no
# --batch / --cluster (a training loop waits on each answer).
@judge_options(exclude=("budget_usd", "batch", "batch_poll_s", "batch_timeout_s", "cluster"))
def reward_server(
    rubric: str | None = typer.Option(
        None, "--rubric", "-r", help="The rubric a request that names none is scored on."
    ),
    model: str | None = typer.Option(None, help="The judge's model."),
    base_url: str | None = typer.Option(None, help="The judge's OpenAI-compatible endpoint."),
    offline: bool = typer.Option(False, help="Judge with the offline stand-in, served from this process (no model)."),
    warehouse: Path | None = typer.Option(
        None, "--warehouse", "-w", help="Record every judgment in this warehouse (default: none recorded)."
    ),
    port: int = typer.Option(8790, help="Port (0: any free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to serve on; any but loopback needs --tls-cert and --tls-key."),
    tls_cert: Path | None = typer.Option(None, help="TLS certificate (PEM) for a bind beyond this machine."),
    tls_key: Path | None = typer.Option(None, help="TLS private key (PEM)."),
    no_guard: bool = typer.Option(False, "--no-guard", help="Send judge-fooling rollouts to the judge too."),
    judge: dict | None = None,
) -> None:
    """Serve rewards: POST /v1/rewards a group of rollouts (and a rubric), get back each one's reward
    and per-criterion scores, pointwise, listwise or pairwise (order-swapped). Cached, batched, rate-limited per
    key with every other run, every judgment recorded in --warehouse. Only for you: requests need the
    secret in the reward-server.secret file of your state folder (the line printed says where); it
    runs in the foreground until Ctrl-C or SIGTERM, lands what it holds, and leaves nothing running."""
    import uvicorn

    import rubricflow as rf
    from rubricflow.api_reward import (
        RewardService,
        out_of_the_collectors_sight,
        reward_config,
        serve_until_interrupted,
        server_secret,
    )
    from rubricflow.tasks.reward.http import SECRET_NAME, reward_app
    from rubricflow.tasks.runtime.owner import LOOPBACK_HOSTS, is_loopback, served_hosts
    from rubricflow.tasks.runtime.prefect_server import state_dir
    from rubricflow.tasks.standins.judge_server import bind

    tls = _tls(host, tls_cert, tls_key)
    settings = judge_settings(model, base_url, need_endpoint=not offline, **(judge or {}))
    engine = rf.Judge.offline(**settings) if offline else rf.Judge(**settings)
    service = RewardService(engine, rubric, warehouse, guard=not no_guard)
    try:
        sock = bind(host, port)
    except (OSError, OverflowError) as exc:  # OverflowError: a port outside 0-65535
        raise InputError(f"cannot listen on {host}:{port}: {exc}") from None
    secret = server_secret()  # made before the line that says where it is: a script reads it next
    hosts = LOOPBACK_HOSTS if is_loopback(host) else served_hosts(host)
    scheme, shown = "https" if tls else "http", f"[{host.strip('[]')}]" if ":" in host else host
    print(  # flushed: a script waiting for this line reads it at once
        f"rubricflow reward server on {scheme}://{shown}:{sock.getsockname()[1]} (POST /v1/rewards; "
        f"secret in {state_dir() / (SECRET_NAME + '.secret')}; Ctrl-C or SIGTERM stops it, nothing is left running)",
        flush=True,
    )
    out_of_the_collectors_sight()
    try:
        serve_until_interrupted(uvicorn.Server(reward_config(reward_app(service, secret, hosts), **tls)), sock)
    finally:
        service.close()
        engine.close()


def _tls(host: str, cert: Path | None, key: Path | None) -> dict:
    """uvicorn's TLS settings; a bind beyond loopback without them is refused (the secret would
    cross the network in the clear)."""
    from rubricflow.tasks.runtime.owner import is_loopback

    if (cert is None) != (key is None):
        raise InputError("--tls-cert and --tls-key go together")
    if cert is None:
        if not is_loopback(host):
            raise InputError(f"--host {host}: a reward server beyond this machine needs --tls-cert and --tls-key")
        return {}
    return {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}
