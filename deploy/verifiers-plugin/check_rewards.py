"""CI's check of the verifiers 0.4 plugin (`.ci/verifiers`), run with rubricflow's Python: a reward
server on the offline judge, a verifiers Task in verifiers' own virtualenv (`vf_rollouts.py`) whose
plugged judge is the plugin, and its rewards compared with rf.Judge.evaluate on the same rollouts
(the last reply, and the whole tool-using trace rendered as a transcript).

    python check_rewards.py <python of the verifiers virtualenv>"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import rubricflow as rf
from rubricflow.tasks.loaders.transcripts import transcript_of

ROLLOUTS = [
    {"id": "plain", "prompt": "What happened at the council?",
     "turns": [{"reply": "The council met on Tuesday and approved the road budget by seven votes to two."}]},
    {"id": "slop", "prompt": "What happened at the council?",
     "turns": [{"reply": "Certainly! Nestled in the heart of town, this vibrant place plays a vital role. I hope this helps."}]},
    {"id": "tools", "prompt": "How did the budget vote go?",
     "turns": [{"call": {"id": "c1", "name": "search", "arguments": '{"q": "road budget vote"}'}, "result": "7 votes to 2"},
               {"reply": "The road budget passed by seven votes to two on Tuesday."}]},
    {"id": "custom", "prompt": "Which files are there?", "system": "You are a careful shell agent.",
     "turns": [{"call": {"id": "c2", "type": "custom", "name": "shell", "arguments": "ls"}, "result": "a.txt b.txt"},
               {"reply": "There are two files, a.txt and b.txt."}]},
    # no task prompt: a simulated user's turn opens the conversation (verifiers' user_sim), and is the question
    {"id": "user-opened", "prompt": None, "opening": "How did the budget vote go?",
     "turns": [{"reply": "The budget passed, seven votes to two, on Tuesday evening."}]},
]  # fmt: skip


def wire(turns: list[dict]) -> list[dict]:
    """The turns as OpenAI chat messages (what the server renders for the full_trace view)."""
    messages = []
    for turn in turns:
        if "call" in turn:
            call = turn["call"]
            kind = call.get("type", "function")  # a custom call's free text goes as its `input`
            body = {"name": call["name"], "input" if kind == "custom" else "arguments": call["arguments"]}
            messages.append(
                {"role": "assistant", "content": "", "tool_calls": [{"id": call["id"], "type": kind, kind: body}]}
            )
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": turn["result"]})
        else:
            messages.append({"role": "assistant", "content": turn["reply"]})
    return messages  # fmt: skip


def main(vf_python: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        warehouse = Path(folder) / "rewards.duckdb"
        service = rf.RewardService(rf.Judge.offline(strategy="holistic"), "llm-slop", warehouse=warehouse)
        with service.judge as judge, rf.RewardServer(service) as server:
            scored = scored_by_verifiers(vf_python, server.url, Path(folder))
            service.ledger.flush()
            check_the_rewards(judge, scored)
        check_the_question_was_sent(warehouse)
    print(f"verifiers 0.4 task rewards from the reward server equal rf.Judge.evaluate on {len(scored)} rollouts")


def scored_by_verifiers(vf_python: str, url: str, folder: Path) -> dict:
    """Each rollout's reward and metrics from a verifiers Task in verifiers' own virtualenv."""
    path = folder / "rollouts.json"
    path.write_text(json.dumps(ROLLOUTS))
    here = Path(__file__).parent / "vf_rollouts.py"  # run with -I: the installed plugin, not this folder's
    done = subprocess.run([vf_python, "-I", str(here), url, str(path)], capture_output=True, text=True, timeout=300)
    if done.returncode:
        sys.exit(f"the verifiers task failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_the_rewards(judge: rf.Judge, scored: dict) -> None:
    wrong = []
    for r in ROLLOUTS:
        asked = r["prompt"] or r["opening"]
        last = judge.evaluate("llm-slop", r["turns"][-1]["reply"], input=asked)
        whole = judge.evaluate("llm-slop", transcript_of("rollout", wire(r["turns"])).rendering, input=asked)
        for view, expected in (("last_reply", last), ("full_trace", whole)):
            got = scored[f"{view}/{r['id']}"]
            metrics = {k.split("/", 1)[1]: v for k, v in got["metrics"].items() if k.startswith("rubricflow_reward/")}
            criteria = {k: c.score for k, c in expected.criteria.items()}
            if abs(got["reward"] - expected.score) > 1e-9 or metrics != criteria:
                wrong.append(
                    f"{view}/{r['id']}: verifiers {got['reward']} {metrics}, rf.Judge {expected.score} {criteria}"
                )
    if wrong:
        sys.exit("rewards differ:\n" + "\n".join(wrong))


def check_the_question_was_sent(warehouse: Path) -> None:
    """Every rollout reached the judge with its question: the task's prompt, or the user's opening
    turn where the task has none (the offline judge does not read it: equal rewards cannot say)."""
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        asked = dict(con.execute("SELECT text, input FROM texts WHERE corpus_id = 'reward.llm-slop'").fetchall())
    for r in ROLLOUTS:
        reply, question = r["turns"][-1]["reply"], r["prompt"] or r["opening"]
        if asked.get(reply) != question:
            sys.exit(f"{r['id']}: the judge was asked {asked.get(reply)!r}, not {question!r}")


if __name__ == "__main__":
    main(sys.argv[1])
