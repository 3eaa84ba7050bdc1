"""Read svc.yaml and the environment into a `Config`: merge, interpolate, check, structure.

SPEC "Configuration": one optional file serves every environment; precedence is built-in defaults, mode defaults,
shared settings, then the `dev:`/`prod:` block, merged by key (lists and scalars replaced). `--mode` beats
`SVC_MODE`, default prod. An unknown key anywhere is an error naming its full path. `${NAME}` (error when unset or
empty), `${NAME:-default}`, `$${` for a literal. Secrets come only from the environment (or `.env` in the working
directory) and are refused in the file. `debug.*` is allowed only in the `dev:` block.

YAML is read with the 1.2 core rules for booleans (only true/false), so keys such as `on` stay strings and
switches such as `on`/`off` are read by the switch type.
"""

import base64
import binascii
import ipaddress
import os
import re
import typing
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs
import croniter
import dotenv
import yaml
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

from ._model import (
    JWT_ALGORITHMS,
    MODE_DEFAULTS,
    SECRET_KEYS,
    SECRET_VARIABLES,
    AuthConfig,
    Config,
    EventsConfig,
    declared_keys,
)
from ._types import VALUE_TYPES, make_converter, optional_inner

MODES = ("dev", "prod")
DEFAULT_FILE = "svc.yaml"
_CONVERTER = make_converter()
_INTERPOLATION = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{")
#: Dev features that are not worth a warning when enabled in prod: operators turn metrics on on purpose.
_QUIET_DEV_FEATURES = {("telemetry", "metrics", "enabled")}


class ConfigError(Exception):
    """The configuration cannot be used; `problems` holds one line per problem, each naming its key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@attrs.frozen
class Secrets:
    """Environment-only settings (SPEC "Configuration": secrets are never in the file)."""

    database_url: str | None
    replica_urls: tuple[str, ...]
    jwt_secret: str | None
    #: The signing secrets of each webhook target (`events.targets.<name>.secret_env`), raw keys, newest first.
    webhook_secrets: Mapping[str, tuple[bytes, ...]] = attrs.field(factory=dict)

    def require_database_url(self) -> str:
        if not self.database_url:
            raise ConfigError(["DATABASE_URL is not set (set it in the environment or in ./.env)"])
        return self.database_url


@attrs.frozen
class LoadedConfig:
    config: Config
    secrets: Secrets
    warnings: tuple[str, ...]
    path: Path | None


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans and duplicate keys refused."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_environment(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The process environment over the values of `./.env` (the environment wins)."""
    values: dict[str, str] = {}
    env_file = cwd / ".env"
    if env_file.is_file():
        values.update({k: v for k, v in dotenv.dotenv_values(env_file).items() if v is not None})
    values.update(environ)
    return values


def read_secrets(env: Mapping[str, str], events: EventsConfig | None = None) -> Secrets:
    """The secrets in `env`; with `events`, its targets' signing secrets (checked by `load_config` first)."""
    replicas = tuple(url.strip() for url in env.get("DATABASE_REPLICA_URLS", "").split(",") if url.strip())
    webhook = {} if events is None else {name: _webhook_keys(env[t.secret_env]) for name, t in events.targets.items()}
    return Secrets(
        database_url=env.get("DATABASE_URL") or None,
        replica_urls=replicas,
        jwt_secret=env.get("AUTH_JWT_SECRET") or None,
        webhook_secrets=webhook,
    )


def _webhook_keys(value: str) -> tuple[bytes, ...]:
    """Standard Webhooks secrets, `whsec_<base64 key>`, space-separated; raises ValueError naming the bad one."""
    keys = []
    for number, secret in enumerate(value.split(), 1):
        prefix, _, encoded = secret.partition("_")
        try:
            key = base64.b64decode(encoded, validate=True) if prefix == "whsec" else b""
        except binascii.Error:
            key = b""
        if len(key) < 16:
            raise ValueError(f"secret {number} is not whsec_ followed by a base64 key of at least 16 bytes")
        keys.append(key)
    if not keys:
        raise ValueError("it is empty")
    return tuple(keys)


def load_config(
    *,
    path: str | os.PathLike[str] | None = None,
    mode: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> LoadedConfig:
    """Load the configuration for `mode` (else `SVC_MODE`, else prod) from `path` (else ./svc.yaml if present).

    Raises ConfigError listing every problem found, each naming its key path.
    """
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    env = read_environment(os.environ if environ is None else environ, cwd)
    mode = mode or env.get("SVC_MODE") or "prod"
    if mode not in MODES:
        raise ConfigError([f"mode: expected dev or prod; got {mode!r}"])

    file = _locate(path, cwd)
    raw = _read_file(file) if file else {}
    shared = {k: v for k, v in raw.items() if k not in MODES}
    blocks = {name: _block(raw, name) for name in MODES}

    problems: list[str] = []
    layers: dict[str, dict[str, Any]] = {}
    for name, written in (("", shared), *blocks.items()):
        prefix = f"{name}." if name else ""
        layer, found = _refuse_secrets(written, prefix)
        problems += found
        if "debug" in layer and name != "dev":
            problems.append(f"{prefix}debug: allowed only in the dev: block")
            del layer["debug"]
        layers[name], found = _check_keys(layer, Config, prefix)
        problems += found
    if problems:
        raise ConfigError(problems)

    defaults = _CONVERTER.unstructure(Config())
    del defaults["mode"]
    merged = _merge(_merge(_merge(defaults, MODE_DEFAULTS[mode]), layers[""]), layers[mode])
    merged = _interpolate(merged, env, "", problems)
    if problems:
        raise ConfigError(problems)
    config = _structure({**merged, "mode": mode})
    problems = _check_values(config) + _check_events(config, env)
    if problems:
        raise ConfigError(problems)
    config = _anchor_export_paths(config, file.parent if file else cwd)
    return LoadedConfig(config, read_secrets(env, config.events), tuple(_dev_feature_warnings(config)), file)


def _anchor_export_paths(config: Config, base: Path) -> Config:
    """Relative `export.*` paths are relative to svc.yaml's directory (else the working directory)."""
    paths = {
        name: str(base / value)
        for name, value in attrs.asdict(config.export).items()
        if name != "pin" and not Path(value).is_absolute()
    }
    return attrs.evolve(config, export=attrs.evolve(config.export, **paths))


def _locate(path: str | os.PathLike[str] | None, cwd: Path) -> Path | None:
    if path is not None:
        file = cwd / path
        if not file.is_file():
            raise ConfigError([f"--config: file not found: {path}"])
        return file
    default = cwd / DEFAULT_FILE
    return default if default.is_file() else None


def _read_file(file: Path) -> dict[str, Any]:
    try:
        raw = yaml.load(file.read_text(encoding="utf-8"), Loader=_Loader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{file.name}: not valid YAML: {exc}"]) from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError([f"{file.name}: expected a mapping of sections at the top level"])
    return raw


def _block(raw: Mapping[str, Any], name: str) -> dict[str, Any]:
    block = raw.get(name)
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise ConfigError([f"{name}: expected a mapping of sections"])
    return block


def _refuse_secrets(layer: dict[str, Any], prefix: str) -> tuple[dict[str, Any], list[str]]:
    """List secret-looking keys (`database.url`, `DATABASE_URL`, ...) and drop them from the layer."""
    problems = []

    def walk(node: Any, keys: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        kept = {}
        for key, value in node.items():
            path = (*keys, key)
            variable = SECRET_KEYS.get(path) or (key.upper() if str(key).upper() in SECRET_VARIABLES else None)
            if variable:
                problems.append(
                    f"{prefix}{'.'.join(map(str, path))}: secrets are read from the environment only; set {variable}"
                )
            else:
                kept[key] = walk(value, path)
        return kept

    return walk(layer, ()), problems


def _check_keys(value: Any, annotation: Any, path: str) -> tuple[Any, list[str]]:
    """Rename aliases to their keys and list every key the declarations do not have, as a full path."""
    inner = optional_inner(annotation)
    if inner is not None:
        return _check_keys(value, inner, path) if value is not None else (value, [])
    if attrs.has(annotation) and annotation not in VALUE_TYPES and isinstance(value, dict):
        keys = declared_keys(annotation)
        normalized: dict[str, Any] = {}
        problems: list[str] = []
        for key, item in value.items():
            field = keys.get(key) if isinstance(key, str) else None
            if field is None:
                problems.append(f"{path}{key}: unknown key")
                continue
            if field.name in normalized:
                problems.append(f"{path}{key}: {field.name} is given twice (once through an alias)")
                continue
            normalized[field.name], found = _check_keys(item, field.type, f"{path}{key}.")
            problems += found
        return normalized, problems
    origin = typing.get_origin(annotation)
    if origin is Mapping and isinstance(value, dict):
        _, item_type = typing.get_args(annotation)
        normalized, problems = {}, []
        for key, item in value.items():
            normalized[key], found = _check_keys(item, item_type, f"{path}{key}.")
            problems += found
        return normalized, problems
    return value, []


def _merge(base: Any, over: Any) -> Any:
    """Merge `over` onto `base` by key; lists and scalars replace; an empty (null) section changes nothing."""
    if isinstance(base, dict) and over is None:
        return base
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return over


def _interpolate(value: Any, env: Mapping[str, str], path: str, problems: list[str]) -> Any:
    if isinstance(value, dict):
        return {k: _interpolate(v, env, f"{path}{k}.", problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, env, f"{path}{i}.", problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "$" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        if text == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        if name is None:
            problems.append(f"{path.rstrip('.')}: malformed ${{...}} in {value!r}")
            return text
        found = env.get(name)
        if found:
            return found
        if default is not None:
            return default
        problems.append(f"{path.rstrip('.')}: environment variable {name} is unset or empty")
        return text

    return _INTERPOLATION.sub(replace, value)


def _structure(merged: Mapping[str, Any]) -> Config:
    try:
        return _CONVERTER.structure(merged, Config)
    except (ClassValidationError, IterableValidationError) as exc:
        raise ConfigError(_describe(exc, "")) from None


def _describe(exc: BaseException, path: str) -> list[str]:
    """One line per leaf error of a cattrs validation tree, each with its dotted key path."""
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        keyed, without = _sub_errors(exc)
        lines: list[str] = []
        for sub, key in keyed:
            lines += _describe(sub, f"{path}.{key}" if path else str(key))
        for sub in without:
            lines += _describe(sub, path)
        return lines
    if isinstance(exc, ForbiddenExtraKeysError):
        return [f"{path}.{key}: unknown key" if path else f"{key}: unknown key" for key in sorted(exc.extra_fields)]
    if isinstance(exc, KeyError):
        return [f"{path}: required"]
    if isinstance(exc, ValueError) and str(exc):
        return [f"{path}: {exc}"]
    return [f"{path}: {cattrs.v.format_exception(exc, None)}"]


def _sub_errors(
    exc: ClassValidationError | IterableValidationError,
) -> tuple[list[tuple[Exception, str | int]], list[Exception]]:
    """A validation error's sub-errors with the key each is about (an attribute's name, an item's index), and those
    about none."""
    if isinstance(exc, ClassValidationError):
        by_attribute, without = exc.group_exceptions()
        return [(sub, note.name) for sub, note in by_attribute], without
    by_index, without = exc.group_exceptions()
    return [(sub, note.index) for sub, note in by_index], without


def _check_rate_limit(config: Config) -> list[str]:
    """SPEC "Limits" -> rate limits: a bucket holds at least one request and refills by at least one a minute."""
    rate_limit = config.limits.rate_limit
    problems = []
    for kind in ("anonymous", "authenticated"):
        rate = getattr(rate_limit, kind)
        for key in ("requests_per_minute", "burst"):
            value = getattr(rate, key)
            if value is not None and value < 1:
                problems.append(f"limits.rate_limit.{kind}.{key}: must be at least 1 (or off)")
    if rate_limit.max_clients < 1:
        problems.append("limits.rate_limit.max_clients: must be at least 1")
    return problems


def _check_values(config: Config) -> list[str]:
    """Checks across keys that types alone cannot express."""
    problems = []
    server = config.server
    cors = server.cors
    if cors.credentials and (not cors.origins or "*" in cors.origins):
        problems.append("server.cors.credentials: needs explicit origins (not *) in server.cors.origins")
    for name in ("keep_alive_timeout", "header_timeout"):
        if getattr(server, name).seconds <= 0:
            problems.append(f"server.{name}: must be more than 0")
    if config.database.pool_size < 1:
        problems.append("database.pool_size: must be at least 1")
    replicas = config.database.replicas
    if replicas.pool_size is not None and replicas.pool_size < 1:
        problems.append("database.replicas.pool_size: must be at least 1")
    if replicas.health_interval.seconds <= 0:
        problems.append("database.replicas.health_interval: must be more than 0")
    if replicas.max_lag_bytes is not None and replicas.max_lag_bytes < 0:
        problems.append("database.replicas.max_lag_bytes: must be 0 or more")
    if config.database.statement_cache < 0:
        problems.append("database.statement_cache: must be 0 (none) or more")
    if not config.database.schemas:
        problems.append("database.schemas: name at least one schema")
    if not 0 <= config.server.port <= 65535:
        problems.append("server.port: must be between 0 and 65535")
    page = config.limits.page_size
    if page.default is not None and page.max is not None and page.default > page.max:
        problems.append("limits.page_size.default: larger than limits.page_size.max")
    if config.search.default_limit > config.search.max_limit:
        problems.append("search.default_limit: larger than search.max_limit")
    problems += _check_rate_limit(config)
    for i, network in enumerate(config.limits.rate_limit.trusted_proxies):
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            problems.append(f"limits.rate_limit.trusted_proxies.{i}: not a network: {network!r}")
    problems += _check_auth(config.auth)
    persisted = config.graphql.persisted_queries
    if persisted.allow_list and not persisted.manifest:
        problems.append("graphql.persisted_queries.allow_list: needs graphql.persisted_queries.manifest")
    if not persisted.enabled:
        given = [key for key in ("manifest", "allow_list") if getattr(persisted, key)]
        problems += [f"graphql.persisted_queries.{key}: needs graphql.persisted_queries.enabled" for key in given]
    problems += _check_telemetry(config)
    if not config.reload.channel:
        problems.append("reload.channel: must not be empty")
    if config.limits.groups is not None and config.limits.groups < 1:
        problems.append("limits.groups: must be at least 1 (or off)")
    problems += _check_subscriptions(config)
    return problems


def _check_telemetry(config: Config) -> list[str]:
    """The metrics' path and own listener, the push interval and the sampled share of traces."""
    telemetry = config.telemetry
    metrics = telemetry.metrics
    problems = []
    if not metrics.path.startswith("/"):
        problems.append("telemetry.metrics.path: must start with /")
    if metrics.listen is not None:
        host, _, port = metrics.listen.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            problems.append(f"telemetry.metrics.listen: not host:port: {metrics.listen!r}")
        if not metrics.enabled:
            problems.append("telemetry.metrics.listen: needs telemetry.metrics.enabled")
    if telemetry.otlp.interval.seconds <= 0:
        problems.append("telemetry.otlp.interval: must be longer than 0s")
    if not 0.0 <= telemetry.traces.sample_ratio <= 1.0:
        problems.append("telemetry.traces.sample_ratio: must be between 0 and 1")
    return problems


def _check_subscriptions(config: Config) -> list[str]:
    """The poller's interval and the transports' timers are spans of time; the limits count subscriptions."""
    subscriptions = config.subscriptions
    problems = [
        f"subscriptions.{key}: must be longer than 0s"
        for key in ("interval", "init_timeout", "keepalive")
        if getattr(subscriptions, key).seconds <= 0
    ]
    problems += [
        f"subscriptions.{key}: must be at least 1"
        for key in ("max_active", "max_per_client")
        if getattr(subscriptions, key) < 1
    ]
    return problems


def _check_events(config: Config, env: Mapping[str, str]) -> list[str]:
    """The `events` block and `entities.*.events`: targets are http(s) URLs with a signing secret in the
    environment, cron expressions parse, and every target named exists."""
    events = config.events
    problems = []
    if not events.channel:
        problems.append("events.channel: must not be empty")
    for key in ("poll_interval", "lease"):
        if getattr(events, key).seconds <= 0:
            problems.append(f"events.{key}: must be longer than 0s")
    if events.retention is not None and events.retention.seconds <= 0:
        problems.append("events.retention: must be longer than 0s (or off)")
    if events.concurrency < 1:
        problems.append("events.concurrency: must be at least 1")
    if events.retry.attempts < 1:
        problems.append("events.retry.attempts: must be at least 1")
    if events.retry.initial.seconds <= 0 or events.retry.max.seconds < events.retry.initial.seconds:
        problems.append("events.retry: initial must be longer than 0s and max at least initial")
    for name, target in events.targets.items():
        path = f"events.targets.{name}"
        url = urllib.parse.urlsplit(target.url)
        if url.scheme not in ("http", "https") or not url.hostname:
            problems.append(f"{path}.url: expected an http:// or https:// URL; got {target.url!r}")
        if target.timeout.seconds <= 0:
            problems.append(f"{path}.timeout: must be longer than 0s")
        if not env.get(target.secret_env):
            problems.append(f"{path}.secret_env: {target.secret_env} is not set in the environment")
            continue
        try:
            _webhook_keys(env[target.secret_env])
        except ValueError as exc:
            problems.append(f"{path}.secret_env: {target.secret_env}: {exc}")
    for name, schedule in events.schedules.items():
        path = f"events.schedules.{name}"
        if not croniter.croniter.is_valid(schedule.cron) or len(schedule.cron.split()) not in (5, 6):
            problems.append(f"{path}.cron: not a cron expression (5 fields, or 6 with seconds last): {schedule.cron!r}")
        if schedule.target not in events.targets:
            problems.append(f"{path}.target: no target {schedule.target!r} in events.targets")
    for key, entity in config.entities.items():
        if entity.events is None:
            continue
        if not entity.events.operations:
            problems.append(f"entities.{key}.events.operations: name at least one of insert, update, delete")
        if entity.events.target not in events.targets:
            problems.append(f"entities.{key}.events.target: no target {entity.events.target!r} in events.targets")
    return problems


#: Custom session settings need a prefix ("app.user_id"); the SQL names are case-insensitive.
_SETTING_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)+$")


def _check_auth(auth: AuthConfig) -> list[str]:
    """SPEC "Authentication": `none` is never accepted, and no claim can replace the claims setting or another
    mapped setting (each setting is written by exactly one entry)."""
    problems = [
        f"auth.algorithms.{i}: {name!r} is not accepted"
        for i, name in enumerate(auth.algorithms)
        if name not in JWT_ALGORITHMS
    ]
    written: dict[str, str] = {}
    if auth.claims_setting is not None:
        written[auth.claims_setting.lower()] = "auth.claims_setting"
    for claim, name in auth.claims.items():
        if not _SETTING_NAME.match(name):
            problems.append(f"auth.claims.{claim}: {name!r} is not a custom setting name (prefix.name)")
        elif name.lower() in written:
            problems.append(f"auth.claims.{claim}: {name} is already written by {written[name.lower()]}")
        written.setdefault(name.lower(), f"auth.claims.{claim}")
    if auth.claims_setting is not None and not _SETTING_NAME.match(auth.claims_setting):
        problems.append(f"auth.claims_setting: {auth.claims_setting!r} is not a custom setting name (prefix.name)")
    return problems


def _dev_feature_warnings(config: Config) -> list[str]:
    """SPEC "Runtime modes": enabling dev features explicitly in prod logs a startup warning."""
    if config.mode != "prod":
        return []
    warnings = []
    for keys, dev_value in _leaves(MODE_DEFAULTS["dev"], ()):
        if keys in _QUIET_DEV_FEATURES:
            continue
        value: Any = config
        for key in keys:
            value = getattr(value, key)
        enabled = "*" in value if isinstance(dev_value, list) else value == dev_value
        if enabled:
            shown = ", ".join(value) if isinstance(value, tuple) else str(value).lower()
            warnings.append(f"dev feature enabled in prod mode: {'.'.join(keys)} = {shown}")
    return warnings


def _leaves(tree: Mapping[str, Any], prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    leaves = []
    for key, value in tree.items():
        if isinstance(value, Mapping):
            leaves += _leaves(value, (*prefix, key))
        else:
            leaves.append(((*prefix, key), value))
    return leaves
