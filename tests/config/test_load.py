"""SPEC "Configuration" and "Runtime modes": how svc.yaml and the environment become a Config."""

import textwrap
from pathlib import Path

import pytest

from svc.config import ConfigError, Duration, apply_changes, load_config

ENV = {"DATABASE_URL": "postgresql://localhost/x"}


def write(tmp_path: Path, text: str, name: str = "svc.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(tmp_path: Path, text: str | None = None, *, mode: str | None = None, env=None, **kwargs):
    if text is not None:
        write(tmp_path, text)
    return load_config(mode=mode, environ={**ENV, **(env or {})}, cwd=tmp_path, **kwargs)


def problems(tmp_path: Path, text: str, **kwargs) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text, **kwargs)
    return info.value.problems


# --- precedence and merging ---------------------------------------------------------------------------------------


def test_builtin_defaults_are_the_prod_defaults(tmp_path):
    config = load(tmp_path).config
    assert config.mode == "prod"
    assert config.server.port == 4000
    assert config.database.schemas == ("app_public",)
    assert config.database.statement_cache == 512
    assert config.limits.page_size.default == 100
    assert config.limits.statement_timeout == Duration("30s", 30.0)
    assert config.errors.detail == "masked"
    assert config.headers.preset == "strict"
    assert config.server.cors.origins == ()
    assert config.graphql.introspection is False
    assert config.export.pin == "fail"
    assert config.reload.channel == "svc_reload"


def test_dev_mode_defaults(tmp_path):
    config = load(tmp_path, mode="dev").config
    assert config.mode == "dev"
    assert config.errors.detail == "full"
    assert config.headers.preset == "relaxed"
    assert config.server.cors.origins == ("*",)
    assert (config.graphql.ui, config.graphql.introspection, config.graphql.sdl) == (True, True, True)
    assert (config.openapi.ui, config.openapi.spec) == (True, True)
    assert config.watch.enabled and config.telemetry.metrics.enabled
    assert config.export.pin == "warn"


def test_precedence_defaults_mode_defaults_shared_then_block(tmp_path):
    text = """
        errors: {detail: masked}
        limits:
          page_size: {max: 500}
          depth: 5
        database:
          schemas: [a, b]
        dev:
          limits:
            page_size: {default: 50}
          database:
            schemas: [c]
    """
    dev = load(tmp_path, text, mode="dev").config
    # shared beats the dev mode default; the block merges by key into shared, lists replace
    assert dev.errors.detail == "masked"
    assert (dev.limits.page_size.default, dev.limits.page_size.max, dev.limits.depth) == (50, 500, 5)
    assert dev.database.schemas == ("c",)
    # untouched dev mode defaults stay
    assert dev.headers.preset == "relaxed"
    prod = load(tmp_path, mode="prod").config
    assert (prod.limits.page_size.default, prod.limits.page_size.max) == (100, 500)
    assert prod.database.schemas == ("a", "b")


def test_partial_nested_section_keeps_its_own_defaults(tmp_path):
    config = load(tmp_path, "limits: {rate_limit: {authenticated: {burst: 10}}}").config
    assert config.limits.rate_limit.authenticated.requests_per_minute == 600
    assert config.limits.rate_limit.authenticated.burst == 10


def test_empty_sections_and_blocks_change_nothing(tmp_path):
    config = load(tmp_path, "database:\ndev:\nprod:\n", mode="dev").config
    assert config.database.pool_size == 10


def test_mode_flag_beats_environment_which_beats_default(tmp_path):
    assert load(tmp_path, env={"SVC_MODE": "dev"}).config.mode == "dev"
    assert load(tmp_path, env={"SVC_MODE": "dev"}, mode="prod").config.mode == "prod"
    assert load(tmp_path).config.mode == "prod"
    with pytest.raises(ConfigError, match="mode: expected dev or prod; got 'staging'"):
        load(tmp_path, mode="staging")


# --- the file ------------------------------------------------------------------------------------------------------


def test_named_config_file_must_exist(tmp_path):
    with pytest.raises(ConfigError, match="--config: file not found: missing.yaml"):
        load(tmp_path, path="missing.yaml")


def test_named_config_file_is_read_instead_of_svc_yaml(tmp_path):
    write(tmp_path, "server: {port: 1}")
    write(tmp_path, "server: {port: 2}", name="other.yaml")
    assert load(tmp_path, path="other.yaml").config.server.port == 2
    assert load(tmp_path).config.server.port == 1


def test_no_file_means_defaults(tmp_path):
    loaded = load(tmp_path)
    assert loaded.path is None and loaded.config.server.port == 4000


def test_not_yaml_or_not_a_mapping(tmp_path):
    assert problems(tmp_path, "server: [")[0].startswith("svc.yaml: not valid YAML")
    assert problems(tmp_path, "- a\n- b\n") == ["svc.yaml: expected a mapping of sections at the top level"]
    assert problems(tmp_path, "dev: 3\n") == ["dev: expected a mapping of sections"]


def test_duplicate_keys_are_refused(tmp_path):
    assert "duplicate key 'port'" in problems(tmp_path, "server:\n  port: 1\n  port: 2\n")[0]


def test_yaml_on_key_stays_a_string(tmp_path):
    config = load(tmp_path, "functions: {total: {mount: {on: orders, arguments: {order_id: id}}}}").config
    assert config.functions["total"].mount.on == "orders"


# --- unknown keys and wrong values ------------------------------------------------------------------------------------


def test_unknown_key_names_its_full_path(tmp_path):
    assert problems(tmp_path, "limits: {page_sise: 10}") == ["limits.page_sise: unknown key"]
    assert problems(tmp_path, "limits: {page_size: {maximum: 10}}") == ["limits.page_size.maximum: unknown key"]
    assert problems(tmp_path, "colour: red") == ["colour: unknown key"]


def test_unknown_key_in_a_mode_block_names_the_block_even_when_inactive(tmp_path):
    text = "prod: {limits: {page_sise: 10}}\ndev: {server: {prot: 1}}"
    assert problems(tmp_path, text, mode="dev") == [
        "dev.server.prot: unknown key",
        "prod.limits.page_sise: unknown key",
    ]


def test_unknown_key_inside_keyed_sections(tmp_path):
    text = """
        entities:
          users:
            columns:
              email: {fieldname: mail}
            foreign_keys:
              users_org_fkey: {reverse_name: members}
    """
    assert problems(tmp_path, text) == [
        "entities.users.columns.email.fieldname: unknown key",
        "entities.users.foreign_keys.users_org_fkey.reverse_name: unknown key",
    ]


def test_every_problem_is_reported_at_once(tmp_path):
    found = problems(tmp_path, "server: {port: abc, host: 3}\nlimits: {depth: many}")
    assert found == [
        "server.host: expected a string; got 3",
        "server.port: expected a whole number; got 'abc'",
        "limits.depth: expected a whole number; got 'many'",
    ]


def test_enumerated_values(tmp_path):
    assert problems(tmp_path, "errors: {detail: verbose}") == [
        "errors.detail: expected one of masked, full; got 'verbose'"
    ]
    assert problems(tmp_path, "extensions: {integrations: {pgvector: auto}}") == [
        "extensions.integrations.pgvector: unknown key"
    ]
    config = load(tmp_path, "extensions: {integrations: {timescaledb: off}, expose: '*'}").config
    assert config.extensions.integrations.timescaledb == "off"
    assert config.extensions.expose == ("*",)


def test_required_key_of_a_keyed_entry(tmp_path):
    assert problems(tmp_path, "entities: {posts: {foreign_keys: {author: {references: {columns: [id]}}}}}") == [
        "entities.posts.foreign_keys.author.references.table: required"
    ]


def test_aliases(tmp_path):
    config = load(tmp_path, "openapi: {rest: false, schema: true, spec_path: /api.json}").config
    assert (config.openapi.enabled, config.openapi.spec, config.openapi.path) == (False, True, "/api.json")
    assert problems(tmp_path, "openapi: {enabled: true, rest: false}") == [
        "openapi.rest: enabled is given twice (once through an alias)"
    ]


def test_an_alias_in_a_mode_block_overrides_the_shared_key(tmp_path):
    config = load(tmp_path, "openapi: {enabled: true}\nprod: {openapi: {rest: false}}").config
    assert config.openapi.enabled is False


# --- value forms ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("on", True), ("off", False), ("yes", True), ("no", False), ("1", True), ("0", False), ("true", True),
     ("false", False), ("'ON'", True), ("'No'", False)],
)  # fmt: skip
def test_switch_words(tmp_path, text, expected):
    assert load(tmp_path, f"rbac: {{enabled: {text}}}").config.rbac.enabled is expected


def test_switch_refuses_other_words(tmp_path):
    assert problems(tmp_path, "rbac: {enabled: maybe}") == [
        "rbac.enabled: expected a switch (true/false, on/off, yes/no, 1/0); got 'maybe'"
    ]


def test_limits_take_a_number_or_off(tmp_path):
    limits = load(tmp_path, "limits: {depth: off, cost: 'OFF', statement_timeout: off, bulk_rows: 5}").config.limits
    assert (limits.depth, limits.cost, limits.statement_timeout, limits.bulk_rows) == (None, None, None, 5)


@pytest.mark.parametrize(
    ("text", "seconds"), [("500ms", 0.5), ("30s", 30), ("1.5m", 90), ("2h", 7200), ("' 10 s '", 10)]
)
def test_durations_need_a_unit(tmp_path, text, seconds):
    assert load(tmp_path, f"limits: {{statement_timeout: {text}}}").config.limits.statement_timeout.seconds == seconds


def test_duration_without_unit_is_refused(tmp_path):
    assert problems(tmp_path, "limits: {statement_timeout: 5000}") == [
        "limits.statement_timeout: expected a duration with a unit (ms, s, m or h), for example 30s; got 5000"
    ]


def test_deprecation_is_true_or_a_reason(tmp_path):
    entities = load(tmp_path, "entities: {a: {deprecated: true}, b: {deprecated: use c}, c: {}}").config.entities
    assert entities["a"].deprecated == "No longer supported"
    assert entities["b"].deprecated == "use c"
    assert entities["c"].deprecated is None


# --- interpolation -------------------------------------------------------------------------------------------------


def test_interpolation(tmp_path):
    text = """
        server: {host: "${HOST}", port: "${PORT:-4100}"}
        reload: {channel: "pre_${CHANNEL}_post"}
        telemetry: {otlp: {headers: {authorization: "Bearer ${TOKEN:-none}", literal: "$${TOKEN}"}}}
        rbac: {enabled: "${RBAC}"}
    """
    config = load(tmp_path, text, env={"HOST": "127.0.0.1", "CHANNEL": "x", "RBAC": "on"}).config
    assert config.server.host == "127.0.0.1"
    assert config.server.port == 4100
    assert config.reload.channel == "pre_x_post"
    assert config.telemetry.otlp.headers == {"authorization": "Bearer none", "literal": "${TOKEN}"}
    assert config.rbac.enabled is True


def test_interpolation_default_applies_to_empty_values(tmp_path):
    assert load(tmp_path, 'server: {port: "${PORT:-4100}"}', env={"PORT": ""}).config.server.port == 4100


def test_interpolation_of_unset_or_empty_variable_is_an_error(tmp_path):
    assert problems(tmp_path, 'server: {host: "${NOPE}"}\nreload: {channel: "${EMPTY}"}', env={"EMPTY": ""}) == [
        "server.host: environment variable NOPE is unset or empty",
        "reload.channel: environment variable EMPTY is unset or empty",
    ]
    assert problems(tmp_path, 'server: {host: "${not a name}"}') == ["server.host: malformed ${...} in '${not a name}'"]


def test_interpolation_only_reads_the_active_mode_block(tmp_path):
    config = load(tmp_path, 'prod: {server: {host: "${PROD_HOST}"}}', mode="dev").config
    assert config.server.host == "0.0.0.0"


def test_interpolated_value_is_typed_like_a_written_one(tmp_path):
    assert problems(tmp_path, 'server: {port: "${PORT}"}', env={"PORT": "http"}) == [
        "server.port: expected a whole number; got 'http'"
    ]


# --- secrets -------------------------------------------------------------------------------------------------------


def test_secrets_in_the_file_are_refused(tmp_path):
    text = """
        database: {url: "postgresql://u:p@h/db"}
        DATABASE_URL: x
        prod:
          auth: {jwt_secret: s3cret}
    """
    assert problems(tmp_path, text) == [
        "database.url: secrets are read from the environment only; set DATABASE_URL",
        "DATABASE_URL: secrets are read from the environment only; set DATABASE_URL",
        "prod.auth.jwt_secret: secrets are read from the environment only; set AUTH_JWT_SECRET",
    ]


def test_secrets_come_from_the_environment(tmp_path):
    secrets = load(
        tmp_path,
        env={"DATABASE_REPLICA_URLS": "postgresql://r1/x, postgresql://r2/x,", "AUTH_JWT_SECRET": "k"},
    ).secrets
    assert secrets.database_url == "postgresql://localhost/x"
    assert secrets.replica_urls == ("postgresql://r1/x", "postgresql://r2/x")
    assert secrets.jwt_secret == "k"


def test_database_url_from_dot_env_and_the_environment_wins(tmp_path):
    (tmp_path / ".env").write_text("# local\nexport DATABASE_URL='postgresql://from-dotenv/x'\nOTHER=1\n")
    from_file = load_config(environ={}, cwd=tmp_path).secrets
    assert from_file.database_url == "postgresql://from-dotenv/x"
    from_env = load_config(environ={"DATABASE_URL": "postgresql://env/x"}, cwd=tmp_path).secrets
    assert from_env.database_url == "postgresql://env/x"


def test_dot_env_feeds_interpolation_too(tmp_path):
    (tmp_path / ".env").write_text("PORT=4321\n")
    assert load(tmp_path, 'server: {port: "${PORT}"}').config.server.port == 4321


def test_database_url_is_required_when_asked_for(tmp_path):
    secrets = load_config(environ={}, cwd=tmp_path).secrets
    with pytest.raises(ConfigError, match="DATABASE_URL is not set"):
        secrets.require_database_url()


# --- debug and dev features --------------------------------------------------------------------------------------


def test_debug_only_in_the_dev_block(tmp_path):
    assert problems(tmp_path, "debug: {sql: true}\nprod: {debug: {explain: true}}") == [
        "debug: allowed only in the dev: block",
        "prod.debug: allowed only in the dev: block",
    ]
    config = load(tmp_path, "dev: {debug: {sql: true}}", mode="dev").config
    assert config.debug.sql is True
    assert load(tmp_path, mode="prod").config.debug.sql is False


def test_dev_features_enabled_in_prod_are_warned_about(tmp_path):
    text = """
        graphql: {introspection: true}
        errors: {detail: full}
        server: {cors: {origins: ["*"]}}
        telemetry: {metrics: {enabled: true}}
    """
    assert load(tmp_path, text).warnings == (
        "dev feature enabled in prod mode: graphql.introspection = true",
        "dev feature enabled in prod mode: errors.detail = full",
        "dev feature enabled in prod mode: server.cors.origins = *",
    )
    assert load(tmp_path, mode="dev").warnings == ()


def test_the_edge_settings_are_checked(tmp_path):
    assert problems(tmp_path, "server: {http: hypercorn, header_timeout: 0s, keep_alive_timeout: 0s}") == [
        "server.keep_alive_timeout: must be more than 0",
        "server.header_timeout: must be more than 0",
    ]
    for http in ("fast", "hypercorn"):  # both edges read heads through the same parser and deadline
        loaded = load(tmp_path, f"server: {{http: {http}, header_timeout: 2s}}")
        assert loaded.config.server.header_timeout.seconds == 2


def test_cross_key_checks(tmp_path):
    text = """
        server: {cors: {credentials: true}}
        limits: {page_size: {default: 2000}, rate_limit: {trusted_proxies: [10.0.0.0/8, nonsense]}}
        graphql: {persisted_queries: {allow_list: true}}
    """
    assert problems(tmp_path, text) == [
        "server.cors.credentials: needs explicit origins (not *) in server.cors.origins",
        "limits.page_size.default: larger than limits.page_size.max",
        "limits.rate_limit.trusted_proxies.1: not a network: 'nonsense'",
        "graphql.persisted_queries.allow_list: needs graphql.persisted_queries.manifest",
        "graphql.persisted_queries.allow_list: needs graphql.persisted_queries.enabled",
    ]


def test_a_manifest_or_allow_list_needs_persisted_queries_enabled(tmp_path):
    text = "graphql: {persisted_queries: {manifest: ops.json, allow_list: true}}"
    assert problems(tmp_path, text) == [
        "graphql.persisted_queries.manifest: needs graphql.persisted_queries.enabled",
        "graphql.persisted_queries.allow_list: needs graphql.persisted_queries.enabled",
    ]


def test_auth_checks_no_claim_can_replace_a_setting(tmp_path):
    """SPEC "Authentication": `none` is never accepted, and each session setting is written by one entry only."""
    text = """
        auth:
          algorithms: [RS256, none, HS1]
          claims: {sub: app.user_id, email: app.user_id, role: role, tenant: request.jwt.claims}
    """
    assert problems(tmp_path, text) == [
        "auth.algorithms.1: 'none' is not accepted",
        "auth.algorithms.2: 'HS1' is not accepted",
        "auth.claims.email: app.user_id is already written by auth.claims.sub",
        "auth.claims.role: 'role' is not a custom setting name (prefix.name)",
        "auth.claims.tenant: request.jwt.claims is already written by auth.claims_setting",
    ]


def test_rate_limit_values(tmp_path):
    text = """
        limits:
          rate_limit:
            anonymous: {requests_per_minute: 0, burst: off}
            authenticated: {requests_per_minute: off, burst: -1}
            max_clients: 0
    """
    assert problems(tmp_path, text) == [
        "limits.rate_limit.anonymous.requests_per_minute: must be at least 1 (or off)",
        "limits.rate_limit.authenticated.burst: must be at least 1 (or off)",
        "limits.rate_limit.max_clients: must be at least 1",
    ]


def test_changes_that_take_effect_and_those_that_need_a_restart(tmp_path):
    running = load(tmp_path, "database: {schemas: [app, extra]}\n", mode="dev").config
    changed = load(
        tmp_path,
        """
database: {schemas: [app, other], pool_size: 3}
entities: {posts: {type_name: Article}}
limits: {depth: 4, statement_timeout: 1s, rate_limit: {enabled: true}}
server: {port: 5000}
dev: {debug: {sql: true}}
""",
        mode="dev",
    ).config
    applied, restart = apply_changes(running, changed)
    assert applied.entities["posts"].type_name == "Article"
    assert applied.limits.depth == 4
    assert applied.database.schemas == ("app", "other")
    assert applied.server.port == running.server.port
    assert applied.limits.statement_timeout == running.limits.statement_timeout
    assert applied.database.pool_size == running.database.pool_size
    assert restart == [
        "database.pool_size",
        "debug.sql",
        "limits.rate_limit.enabled",
        "limits.statement_timeout",
        "server.port",
    ]


def test_a_changed_first_schema_needs_a_restart(tmp_path):
    running = load(tmp_path, "database: {schemas: [app, extra]}\n").config
    changed = load(tmp_path, "database: {schemas: [other, app]}\n").config
    applied, restart = apply_changes(running, changed)
    assert applied.database.schemas == ("app", "other")
    assert restart == ["database.schemas"]


def test_subscription_timers_and_limits_and_the_groups_limit_are_checked(tmp_path):
    """A zero interval would poll without pause; zero limits would refuse every subscription or grouping."""
    text = (
        "subscriptions: {interval: 0s, init_timeout: 0s, keepalive: 1s, max_active: 0, max_per_client: 5}\n"
        "limits: {groups: 0}\n"
    )
    assert problems(tmp_path, text) == [
        "limits.groups: must be at least 1 (or off)",
        "subscriptions.interval: must be longer than 0s",
        "subscriptions.init_timeout: must be longer than 0s",
        "subscriptions.max_active: must be at least 1",
    ]


def test_telemetry_path_listener_interval_and_ratio_are_checked(tmp_path):
    """An own metrics listener without metrics would be accepted and serve nothing; a zero interval would push
    without pause."""
    text = (
        "telemetry:\n"
        "  metrics: {path: metrics, listen: 'nowhere'}\n"
        "  otlp: {interval: 0s}\n"
        "  traces: {sample_ratio: 2}\n"
    )
    assert problems(tmp_path, text) == [
        "telemetry.metrics.path: must start with /",
        "telemetry.metrics.listen: not host:port: 'nowhere'",
        "telemetry.metrics.listen: needs telemetry.metrics.enabled",
        "telemetry.otlp.interval: must be longer than 0s",
        "telemetry.traces.sample_ratio: must be between 0 and 1",
    ]
