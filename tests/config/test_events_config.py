"""The `events` block and `entities.*.events` (SPEC "Events" -> "Change events and schedules"; README "Events"):
bad targets, secrets, cron expressions and operations are startup errors naming the key; the signing secrets come
from the environment only and are never part of the Config."""

import base64

import attrs

from tests.config.test_load import load, problems

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef").decode()
OLD_SECRET = "whsec_" + base64.b64encode(b"fedcba9876543210").decode()

TARGET = """
events:
  targets:
    default: {url: "http://127.0.0.1:9/hook", secret_env: HOOK_SECRET}
"""


def test_a_target_s_secrets_are_read_from_the_environment_newest_first(tmp_path):
    loaded = load(tmp_path, TARGET, env={"HOOK_SECRET": f"{SECRET} {OLD_SECRET}"})
    assert loaded.secrets.webhook_secrets == {"default": (b"0123456789abcdef", b"fedcba9876543210")}
    assert SECRET not in repr(attrs.asdict(loaded.config))
    target = loaded.config.events.targets["default"]
    assert (target.url, target.timeout.seconds) == ("http://127.0.0.1:9/hook", 10)


def test_bad_targets_name_their_keys(tmp_path):
    text = """
    events:
      targets:
        ftp: {url: "ftp://example.com/x", secret_env: HOOK_SECRET}
        unset: {url: "https://example.com/x", secret_env: NOT_SET}
        malformed: {url: "https://example.com/x", secret_env: BAD_SECRET}
        slow: {url: "https://example.com/x", secret_env: HOOK_SECRET, timeout: 0s}
    """
    found = problems(tmp_path, text, env={"HOOK_SECRET": SECRET, "BAD_SECRET": "s3cret"})
    assert found == [
        "events.targets.ftp.url: expected an http:// or https:// URL; got 'ftp://example.com/x'",
        "events.targets.unset.secret_env: NOT_SET is not set in the environment",
        "events.targets.malformed.secret_env: BAD_SECRET: secret 1 is not whsec_ followed by a base64 key of at"
        " least 16 bytes",
        "events.targets.slow.timeout: must be longer than 0s",
    ]
    assert not any("s3cret" in problem for problem in found)


def test_schedules_and_entities_name_existing_targets_and_valid_cron(tmp_path):
    text = (
        TARGET
        + """
  schedules:
    nightly: {cron: "0 3 * * *"}
    broken: {cron: "every night", target: default}
    elsewhere: {cron: "*/5 * * * *", target: nowhere}
entities:
  people: {events: {operations: [insert], target: nowhere}}
  orders: {events: {operations: []}}
"""
    )
    assert problems(tmp_path, text, env={"HOOK_SECRET": SECRET}) == [
        "events.schedules.broken.cron: not a cron expression (5 fields, or 6 with seconds last): 'every night'",
        "events.schedules.elsewhere.target: no target 'nowhere' in events.targets",
        "entities.people.events.target: no target 'nowhere' in events.targets",
        "entities.orders.events.operations: name at least one of insert, update, delete",
    ]


def test_an_unknown_operation_names_its_key(tmp_path):
    found = problems(tmp_path, TARGET + "entities:\n  people: {events: {operations: [insert, truncate]}}\n",
                     env={"HOOK_SECRET": SECRET})  # fmt: skip
    assert len(found) == 1 and found[0].startswith("entities.people.events.operations.1: expected one of insert")


def test_the_dispatcher_settings_are_checked(tmp_path):
    text = TARGET + "  concurrency: 0\n  lease: 0s\n  retry: {attempts: 0, initial: 5s, max: 1s}\n"
    assert problems(tmp_path, text, env={"HOOK_SECRET": SECRET}) == [
        "events.lease: must be longer than 0s",
        "events.concurrency: must be at least 1",
        "events.retry.attempts: must be at least 1",
        "events.retry: initial must be longer than 0s and max at least initial",
    ]
