"""The declarations of svc.yaml: every section and key of SPEC "Configuration", typed, with defaults and docs.

These frozen attrs classes are the single source for three things: the values the service reads (structured by
cattrs), the unknown-key check, and the JSON Schema written by `svc export-config-schema`. A key declared here for
a feature that is not built yet is accepted and inert. Defaults are the prod defaults; `MODE_DEFAULTS` holds what
dev mode changes (SPEC "Runtime modes").
"""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._types import Deprecation, Duration, Json, NameList, Toggle

_NO_DEFAULT: Any = attrs.NOTHING


def setting(
    default: Any = _NO_DEFAULT,
    *,
    doc: str,
    factory: Any = None,
    aliases: tuple[str, ...] = (),
) -> Any:
    """Declare one key: its default (or factory), a one-line doc for the JSON Schema, and accepted aliases."""
    metadata = {"doc": doc, "aliases": aliases}
    if factory is not None:
        return attrs.field(factory=factory, metadata=metadata)
    return attrs.field(default=default, metadata=metadata)


def section(cls: type, doc: str, **kwargs: Any) -> Any:
    return setting(factory=cls, doc=doc, **kwargs)


# --- database ----------------------------------------------------------------------------------------------------


@attrs.frozen
class ReplicasConfig:
    """The standbys of `DATABASE_REPLICA_URLS` (SPEC "Operations": read replicas)."""

    pool_size: int | None = setting(None, doc="Connections per replica pool; default `database.pool_size`.")
    health_interval: Duration = setting(
        Duration.parse("10s"), doc="How often the replica health checker checks every replica."
    )
    max_lag: Duration = setting(
        Duration.parse("30s"),
        doc="A replica further behind the primary than this leaves the rotation until it catches up.",
    )
    max_lag_bytes: int | None = setting(
        None,
        doc="A replica further behind the primary than this many bytes of WAL leaves the rotation; none: no bound.",
    )


@attrs.frozen
class DatabaseConfig:
    pool_size: int = setting(10, doc="Connections in the pool.")
    statement_cache: int = setting(512, doc="Prepared statements cached per connection; 0 for none.")
    schemas: tuple[str, ...] = setting(("app_public",), doc="Schemas to expose; the first is the default one.")
    sql_comments: bool = setting(
        True, doc="Tag every statement with a comment naming the GraphQL operation or REST resource and method."
    )
    connect_timeout: Duration = setting(
        Duration.parse("5s"), doc="Longest wait for a new database connection before the request fails."
    )
    replicas: ReplicasConfig = section(ReplicasConfig, "Read replicas (their URLs: `DATABASE_REPLICA_URLS`).")


# --- server ------------------------------------------------------------------------------------------------------

DEFAULT_CORS_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD")
DEFAULT_CORS_HEADERS = (
    "authorization",
    "content-type",
    "accept",
    "prefer",
    "x-request-id",
    "if-none-match",
    "if-match",
    "range",
    "x-min-wal-position",
)


@attrs.frozen
class CorsConfig:
    origins: tuple[str, ...] = setting(
        (), doc="Allowed origins; `*` allows any (dev default). Prod allows none unless listed."
    )
    methods: tuple[str, ...] = setting(DEFAULT_CORS_METHODS, doc="Methods allowed in cross-origin requests.")
    headers: tuple[str, ...] = setting(DEFAULT_CORS_HEADERS, doc="Request headers allowed in cross-origin requests.")
    expose_headers: tuple[str, ...] | None = setting(
        None, doc="Response headers exposed to scripts; default every header the service sends."
    )
    credentials: bool = setting(False, doc="Allow credentials; needs explicit origins.")
    max_age: int = setting(600, doc="Seconds a browser may cache a preflight answer.")


@attrs.frozen
class ServerConfig:
    host: str = setting("0.0.0.0", doc="Listen address.")
    port: int = setting(4000, doc="Listen port.")
    shutdown_timeout: Duration = setting(
        Duration.parse("20s"),
        doc="On SIGTERM, how long in-flight requests may run on before they are cancelled.",
    )
    http: Literal["fast", "hypercorn"] = setting(
        "fast",
        doc="Who serves HTTP/1.1: `fast`, svc's own edge (WebSocket and HTTP/2 connections are handed to hypercorn "
        "on the same port), or `hypercorn` for every connection (without the fast edge's limits and head deadline).",
    )
    keep_alive_timeout: Duration = setting(
        Duration.parse("5s"), doc="An idle keep-alive connection is closed after this long."
    )
    header_timeout: Duration = setting(
        Duration.parse("10s"),
        doc="How long a request's head (request line and headers) may take to arrive, from its first byte (slow "
        "clients are closed), and each wait for more of a body.",
    )
    cors: CorsConfig = section(CorsConfig, "Cross-origin resource sharing.")


# --- errors, headers ---------------------------------------------------------------------------------------------


@attrs.frozen
class ErrorMapping:
    status: int | None = setting(None, doc="HTTP status to answer with.")
    title: str | None = setting(None, doc="Title of the problem document.")
    code: str | None = setting(None, doc="Error code (`extensions.code` over GraphQL).")
    type: str | None = setting(None, doc="Error type.")


@attrs.frozen
class ErrorsConfig:
    detail: Literal["masked", "full"] = setting(
        "masked", doc="`masked` hides database messages behind a request id; `full` shows them (dev default)."
    )
    map: Mapping[str, ErrorMapping] = setting(
        factory=dict, doc="SQLSTATE or constraint name to {status, title, code, type}; a constraint name wins."
    )


@attrs.frozen
class HeadersConfig:
    preset: Literal["strict", "relaxed", "off"] = setting(
        "strict", doc="Security header preset: strict (prod default), relaxed (dev default) or off."
    )
    set: Mapping[str, str] = setting(
        factory=dict, doc="Single headers overriding the preset; an empty value removes the header."
    )


# --- watch, export, reload ---------------------------------------------------------------------------------------


@attrs.frozen
class WatchConfig:
    enabled: bool = setting(False, doc="Watch the catalog for DDL and reload (dev default on).")
    export: bool = setting(True, doc="Re-export the schema files when the schema changes.")


@attrs.frozen
class ExportConfig:
    """Exported schema files (relative paths: relative to svc.yaml's directory) and the startup pin check."""

    graphql: str = setting("schema.graphql", doc="Path of the exported GraphQL SDL.")
    subgraph: str = setting("subgraph.graphql", doc="Path of the exported federation subgraph SDL.")
    openapi: str = setting("openapi.json", doc="Path of the exported OpenAPI document (YAML for .yaml/.yml).")
    config_schema: str = setting("svc.schema.json", doc="Path of the exported configuration JSON Schema.")
    pin: Literal["fail", "warn", "off"] = setting(
        "fail", doc="Startup comparison with the exported files: fail (prod default), warn (dev default) or off."
    )


@attrs.frozen
class ReloadConfig:
    enabled: bool = setting(True, doc="Reload the schema when a notification arrives on `channel`.")
    channel: str = setting("svc_reload", doc="LISTEN/NOTIFY channel of reload requests.")


# --- limits ------------------------------------------------------------------------------------------------------


@attrs.frozen
class PageSizeConfig:
    default: int | None = setting(100, doc="Rows of a connection with neither first nor last.")
    max: int | None = setting(1000, doc="Largest first/last; plain lists and to-many relations are cut here.")


@attrs.frozen
class RateConfig:
    requests_per_minute: int | None = setting(60, doc="Refill rate; `off` leaves this kind of client unlimited.")
    burst: int | None = setting(None, doc="Bucket size; defaults to the per-minute rate.")


@attrs.frozen
class RateLimitConfig:
    enabled: bool = setting(False, doc="Rate-limit /graphql, /rest, /export and /import per client.")
    anonymous: RateConfig = section(RateConfig, "Clients without a verified token (counted by address).")
    authenticated: RateConfig = setting(
        factory=lambda: RateConfig(requests_per_minute=600),
        doc="Clients with a verified token (counted by `key_claim`).",
    )
    key_claim: str = setting("sub", doc="Claim (or dot path) identifying an authenticated client.")
    trusted_proxies: tuple[str, ...] = setting(
        (), doc="Networks whose X-Forwarded-For entries are trusted to name the client."
    )
    max_clients: int = setting(100000, doc="Buckets kept in memory; the least recently used are evicted.")


@attrs.frozen
class LimitsConfig:
    page_size: PageSizeConfig = section(PageSizeConfig, "Page sizes.")
    depth: int | None = setting(10, doc="Nesting levels of rows (the root list is 1).")
    cost: int | None = setting(10_000_000, doc="Estimated rows read by one request.")
    bulk_rows: int | None = setting(1000, doc="Rows per bulk write, and rows a write by filter may touch.")
    groups: int | None = setting(10000, doc="Groups per aggregate response.")
    request_body_bytes: int | None = setting(1_048_576, doc="Largest request body of /graphql and /rest.")
    require_filter: bool = setting(False, doc="GraphQL bulk update/delete with an empty where needs `unfiltered`.")
    count_threshold: int | None = setting(10000, doc="Threshold of `Prefer: count=estimated`.")
    statement_timeout: Duration | None = setting(
        Duration.parse("30s"), doc="Statement timeout of every connection (a role's own lower value applies)."
    )
    rate_limit: RateLimitConfig = section(RateLimitConfig, "Per-client rate limits.")


# --- events, subscriptions ---------------------------------------------------------------------------------------


@attrs.frozen
class WebhookTargetConfig:
    """Where events are POSTed, signed per Standard Webhooks."""

    url: str = setting(doc="http(s) URL the events are POSTed to.")
    secret_env: str = setting(
        doc="Environment variable holding the signing secret (whsec_...); several, space-separated, while rotating."
    )
    timeout: Duration = setting(Duration.parse("10s"), doc="Longest wait for the receiver's answer.")


@attrs.frozen
class RetryConfig:
    """When a failed delivery is tried again: exponential backoff with full jitter, then the dead letter."""

    attempts: int = setting(8, doc="Delivery attempts before an event is dead.")
    initial: Duration = setting(Duration.parse("1s"), doc="Longest gap before the second attempt; doubles each time.")
    max: Duration = setting(Duration.parse("10m"), doc="Longest gap between two attempts.")


@attrs.frozen
class ScheduleConfig:
    """A cron schedule: each slot enqueues one event, once across all instances."""

    cron: str = setting(doc="Cron expression in UTC, `*/5 * * * *`; a sixth field, last, counts seconds.")
    target: str = setting("default", doc="Webhook target (a key of events.targets).")
    payload: Json = setting(None, doc="JSON sent as the event's payload.")


@attrs.frozen
class EventsConfig:
    install: Literal["auto", "manual"] = setting(
        "auto", doc="Install event capture triggers (auto) or leave it to `svc events sql` (manual)."
    )
    channel: str = setting("svc_events", doc="LISTEN/NOTIFY channel the capture triggers wake the dispatcher on.")
    poll_interval: Duration = setting(
        Duration.parse("5s"), doc="Safety-net poll for due events (retries, missed notifications) and schedules."
    )
    lease: Duration = setting(
        Duration.parse("60s"), doc="How long a claimed event is reserved for its instance; then another takes it."
    )
    concurrency: int = setting(64, doc="Deliveries in flight per instance.")
    retention: Duration | None = setting(
        Duration.parse("168h"),
        doc="How long delivered events (and their attempts) are kept; off keeps them. Dead events are always kept.",
    )
    retry: RetryConfig = section(RetryConfig, "Retries of failed deliveries.")
    targets: Mapping[str, WebhookTargetConfig] = setting(factory=dict, doc="Webhook targets by name.")
    schedules: Mapping[str, ScheduleConfig] = setting(factory=dict, doc="Cron schedules by name.")


@attrs.frozen
class SubscriptionsConfig:
    enabled: bool = setting(False, doc="Serve live-query subscriptions (a Subscription type mirroring Query).")
    interval: Duration = setting(Duration.parse("1s"), doc="How often live queries are re-run.")
    max_active: int = setting(
        10000, doc="Live subscriptions per instance; one more is refused with TOO_MANY_SUBSCRIPTIONS."
    )
    max_per_client: int = setting(
        100,
        doc="Live subscriptions per client (counted as rate limits count clients: the token's key claim, else the "
        "address); one more is refused with TOO_MANY_SUBSCRIPTIONS.",
    )
    init_timeout: Duration = setting(
        Duration.parse("3s"), doc="How long a WebSocket may wait before connection_init (then closed with 4408)."
    )
    keepalive: Duration = setting(
        Duration.parse("5s"),
        doc="Heartbeat of idle event streams and multipart responses (a comment, an empty part), so proxies keep them.",
    )


# --- auth, rbac --------------------------------------------------------------------------------------------------

DEFAULT_JWT_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA", "HS256", "HS384", "HS512",
)  # fmt: skip
#: Every algorithm a token may be signed with; `auth.algorithms` narrows it (`none` is never among them).
JWT_ALGORITHMS = frozenset(DEFAULT_JWT_ALGORITHMS)


@attrs.frozen
class AuthRolesConfig:
    authenticated: str | None = setting(
        None, doc="Database role of requests with a verified token; default the connecting role."
    )
    anonymous: str | None = setting(None, doc="Database role of requests without a token; default the connecting role.")


@attrs.frozen
class AuthConfig:
    issuer: str | None = setting(
        None, doc="Expected `iss`; its /.well-known/openid-configuration locates the signing keys."
    )
    audience: tuple[str, ...] = setting((), doc="Accepted `aud` values; empty skips the check.")
    jwks_url: str | None = setting(None, doc="JWKS address when the issuer has no discovery document.")
    jwks_refresh_floor: Duration = setting(
        Duration.parse("30s"), doc="Least time between two JWKS fetches caused by tokens with an unknown `kid`."
    )
    algorithms: tuple[str, ...] = setting(
        DEFAULT_JWT_ALGORITHMS, doc="Accepted signature algorithms (`none` is never accepted)."
    )
    leeway: Duration = setting(Duration.parse("30s"), doc="Clock skew allowed on exp and nbf.")
    anonymous: bool = setting(True, doc="Serve requests without a token; off refuses them with 401.")
    roles: AuthRolesConfig = section(AuthRolesConfig, "Database role per kind of request (never from a token).")
    claims: Mapping[str, str] = setting(
        factory=dict, doc="Claim (or dot path) to the session setting it is written to for policies."
    )
    claims_setting: str | None = setting(
        "request.jwt.claims", doc="Session setting holding all claims as JSON; null for none."
    )


@attrs.frozen
class RbacConfig:
    enabled: bool = setting(False, doc="Prune the APIs to what the connecting role may access.")


# --- graphql, openapi --------------------------------------------------------------------------------------------


@attrs.frozen
class FederationConfig:
    enabled: bool = setting(False, doc="Serve a federation v2 subgraph.")


@attrs.frozen
class PersistedQueriesConfig:
    enabled: bool = setting(False, doc="Accept persisted queries.")
    automatic: bool = setting(True, doc="Register hashes sent together with their text.")
    manifest: str | None = setting(None, doc="Path of a persisted-query manifest.")
    allow_list: bool = setting(False, doc="Run only manifest operations (needs a manifest).")


@attrs.frozen
class GraphqlConfig:
    enabled: bool = setting(True, doc="Serve /graphql.")
    ui: bool = setting(False, doc="Serve the GraphiQL IDE at /graphiql (dev default on).")
    introspection: bool = setting(False, doc="Answer introspection queries (dev default on).")
    sdl: bool = setting(False, doc="Serve the SDL over HTTP (dev default on).")
    sdl_path: str = setting("/schema.graphql", doc="Path of the SDL.")
    subgraph_path: str = setting("/subgraph.graphql", doc="Path of the subgraph SDL.")
    federation: FederationConfig = section(FederationConfig, "Apollo federation.")
    persisted_queries: PersistedQueriesConfig = section(PersistedQueriesConfig, "Persisted queries.")


@attrs.frozen
class OpenapiConfig:
    enabled: bool = setting(True, doc="Serve the REST API and its document.", aliases=("rest",))
    ui: bool = setting(False, doc="Serve the Scalar reference at /scalar (dev default on).")
    spec: bool = setting(False, doc="Serve the OpenAPI document (dev default on).", aliases=("schema",))
    path: str = setting("/openapi.json", doc="Path of the OpenAPI document.", aliases=("spec_path",))


# --- telemetry ---------------------------------------------------------------------------------------------------


@attrs.frozen
class LogsConfig:
    level: Literal["debug", "info", "warning", "error"] = setting("info", doc="Lowest level written.")
    format: Literal["text", "json"] = setting("text", doc="Log line format.")


@attrs.frozen
class MetricsConfig:
    enabled: bool = setting(False, doc="Serve Prometheus metrics (dev default on).")
    path: str = setting("/metrics", doc="Path of the metrics exposition.")
    listen: str | None = setting(None, doc="host:port of an own metrics listener (the API port then has none).")


@attrs.frozen
class TracesConfig:
    sample_ratio: float = setting(1.0, doc="Share of new traces kept; sampled callers' traces are always kept.")


@attrs.frozen
class OtlpConfig:
    endpoint: str | None = setting(None, doc="OTLP/HTTP endpoint; default OTEL_EXPORTER_OTLP_ENDPOINT, else none.")
    headers: Mapping[str, str] = setting(factory=dict, doc="Headers sent with every export.")
    traces: bool = setting(True, doc="Export traces.")
    metrics: bool = setting(True, doc="Export metrics.")
    logs: bool = setting(True, doc="Export logs.")
    interval: Duration = setting(Duration.parse("60s"), doc="Metrics push interval.")


@attrs.frozen
class TelemetryConfig:
    service_name: str | None = setting(None, doc="service.name; default OTEL_SERVICE_NAME, else svc.")
    logs: LogsConfig = section(LogsConfig, "Logs.")
    metrics: MetricsConfig = section(MetricsConfig, "Metrics.")
    traces: TracesConfig = section(TracesConfig, "Traces.")
    otlp: OtlpConfig = section(OtlpConfig, "OpenTelemetry export.")


# --- extensions, search ------------------------------------------------------------------------------------------


@attrs.frozen
class IntegrationsConfig:
    timescaledb: Toggle = setting(
        "auto", doc="Hypertables' dimensions read for `svc advise` (their estimates and descriptions are not built)."
    )
    pg_jsonschema: Toggle = setting("auto", doc="JSON Schema checks type JSON columns.")
    pgvectorscale: Toggle = setting("auto", doc="Semantic search from pgvectorscale indexes.")
    vectorchord: Toggle = setting("auto", doc="Semantic search from VectorChord indexes.")
    pgroonga: Toggle = setting("auto", doc="Full-text search from PGroonga indexes.")
    pg_stat_statements: Toggle = setting("auto", doc="`advise --statements`.")
    postgres_fdw: Toggle = setting("auto", doc="Keys of foreign tables from the remote catalog.")


@attrs.frozen
class ExtensionsConfig:
    integrations: IntegrationsConfig = section(IntegrationsConfig, "Extension integrations: auto or off.")
    expose: NameList = setting((), doc="Extensions whose objects are exposed, or `*`.")


@attrs.frozen
class SearchConfig:
    default_limit: int = setting(10, doc="Search page size when `first` is not given.")
    max_limit: int = setting(50, doc="Largest search `first`.")


# --- entities, functions, types ----------------------------------------------------------------------------------

OPERATIONS = Literal["read", "list", "connection", "create", "update", "delete"]
EVENT_OPERATIONS = Literal["insert", "update", "delete"]


@attrs.frozen
class ColumnConfig:
    field_name: str | None = setting(None, doc="API field name.")
    description: str | None = setting(None, doc="Description (default the column comment).")
    omit: bool = setting(False, doc="Hide the column from every type, input, filter and order.")


@attrs.frozen
class ReferencesConfig:
    table: str = setting(doc="Referenced table.")
    columns: tuple[str, ...] | None = setting(None, doc="Referenced columns; default its primary key.")


@attrs.frozen
class ForeignKeyConfig:
    field_name: str | None = setting(None, doc="Name of the to-one field.")
    reverse_field_name: str | None = setting(None, doc="Name of the reverse to-many field.")
    omit_reverse: bool = setting(False, doc="No reverse field.")
    columns: tuple[str, ...] | None = setting(None, doc="Columns of a virtual foreign key.")
    references: ReferencesConfig | None = setting(None, doc="Target of a virtual foreign key.")
    batch: bool = setting(False, doc="Read a page of parents' children in one remote query.")


@attrs.frozen
class EntityEventsConfig:
    operations: tuple[EVENT_OPERATIONS, ...] = setting(("insert", "update", "delete"), doc="Changes that emit events.")
    description: str | None = setting(None, doc="Description of the webhooks.")
    target: str = setting("default", doc="Webhook target the events go to (a key of events.targets).")


@attrs.frozen
class EntityConfig:
    type_name: str | None = setting(None, doc="GraphQL type name.")
    description: str | None = setting(None, doc="Description (default the table comment).")
    omit: bool = setting(False, doc="Hide the table.")
    omit_operations: tuple[OPERATIONS, ...] = setting((), doc="Operations not offered.")
    events: EntityEventsConfig | None = setting(None, doc="Change events of this table.")
    list_field: str | None = setting(None, doc="Name of the plain list root field.")
    single_field: str | None = setting(None, doc="Name of the lookup root field.")
    connection_field: str | None = setting(None, doc="Name of the connection root field.")
    primary_key: tuple[str, ...] | None = setting(None, doc="Key for a relation without one (views).")
    columns: Mapping[str, ColumnConfig] = setting(factory=dict, doc="Per-column settings.")
    foreign_keys: Mapping[str, ForeignKeyConfig] = setting(
        factory=dict, doc="Per-foreign-key settings; a new name with columns and references declares one."
    )
    version_column: str | None = setting(None, doc="Trigger-maintained column used as the row version.")
    deprecated: Deprecation | None = setting(None, doc="true or a deprecation reason.")


@attrs.frozen
class MountConfig:
    on: str = setting(doc="Table the function becomes a field of.")
    field_name: str | None = setting(None, doc="Name of that field.")
    arguments: Mapping[str, str] = setting(factory=dict, doc="Argument filled from a column: argument -> column.")


@attrs.frozen
class FunctionConfig:
    field_name: str | None = setting(None, doc="Root field name.")
    omit: bool = setting(False, doc="Hide the function.")
    deprecated: Deprecation | None = setting(None, doc="true or a deprecation reason.")
    mount: MountConfig | None = setting(None, doc="Also serve the function as a field of a table.")


@attrs.frozen
class AttributeConfig:
    field_name: str | None = setting(None, doc="Field name of a composite type's attribute.")


@attrs.frozen
class TypeConfig:
    type_name: str | None = setting(None, doc="GraphQL type name.")
    description: str | None = setting(None, doc="Description.")
    values: Mapping[str, str] = setting(factory=dict, doc="Enum label (or CHECK list value) to GraphQL value.")
    attributes: Mapping[str, AttributeConfig] = setting(factory=dict, doc="Composite type attributes.")


# --- debug and the whole file ------------------------------------------------------------------------------------


@attrs.frozen
class DebugConfig:
    sql: bool = setting(False, doc="X-Debug-SQL header on every response.")
    explain: bool = setting(False, doc="X-Debug-Explain header on every response.")
    statements: bool = setting(False, doc="/debug/statements report.")


@attrs.frozen
class Config:
    """The whole configuration after defaults, mode defaults, shared settings and the mode block are merged."""

    database: DatabaseConfig = section(DatabaseConfig, "Database connections.")
    server: ServerConfig = section(ServerConfig, "HTTP listener.")
    errors: ErrorsConfig = section(ErrorsConfig, "Error detail and mapping.")
    headers: HeadersConfig = section(HeadersConfig, "Security headers.")
    watch: WatchConfig = section(WatchConfig, "Catalog watching (dev).")
    export: ExportConfig = section(ExportConfig, "Exported schema files and pinning.")
    limits: LimitsConfig = section(LimitsConfig, "Limits shared by GraphQL and REST.")
    events: EventsConfig = section(EventsConfig, "Change events.")
    subscriptions: SubscriptionsConfig = section(SubscriptionsConfig, "Live-query subscriptions.")
    auth: AuthConfig = section(AuthConfig, "Token verification, roles and claims.")
    rbac: RbacConfig = section(RbacConfig, "Role-based pruning of the APIs.")
    graphql: GraphqlConfig = section(GraphqlConfig, "GraphQL switches.")
    openapi: OpenapiConfig = section(OpenapiConfig, "REST and OpenAPI switches.")
    telemetry: TelemetryConfig = section(TelemetryConfig, "Logs, metrics and traces.")
    reload: ReloadConfig = section(ReloadConfig, "Schema reload on notification.")
    extensions: ExtensionsConfig = section(ExtensionsConfig, "PostgreSQL extension integrations.")
    entities: Mapping[str, EntityConfig] = setting(factory=dict, doc="Per-table settings, keyed by table name.")
    functions: Mapping[str, FunctionConfig] = setting(factory=dict, doc="Per-function settings.")
    types: Mapping[str, TypeConfig] = setting(
        factory=dict, doc="Per-type settings: enums, `<table>.<column>` CHECK lists, composites."
    )
    search: SearchConfig = section(SearchConfig, "Search page sizes.")
    debug: DebugConfig = section(DebugConfig, "Dev-only debug outputs (allowed only in the dev: block).")
    mode: Literal["dev", "prod"] = attrs.field(default="prod", metadata={"internal": True})


#: What dev mode changes relative to the built-in (prod) defaults (SPEC "Runtime modes").
MODE_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "dev": {
        "watch": {"enabled": True},
        "graphql": {"ui": True, "introspection": True, "sdl": True},
        "openapi": {"ui": True, "spec": True},
        "errors": {"detail": "full"},
        "headers": {"preset": "relaxed"},
        "telemetry": {"metrics": {"enabled": True}},
        "export": {"pin": "warn"},
        "server": {"cors": {"origins": ["*"]}},
    },
    "prod": {},
}

#: Secrets are environment-only; a key like these in the file is refused, naming the variable to use instead.
SECRET_KEYS: Mapping[tuple[str, ...], str] = {
    ("database", "url"): "DATABASE_URL",
    ("database", "replica_urls"): "DATABASE_REPLICA_URLS",
    ("auth", "jwt_secret"): "AUTH_JWT_SECRET",
    ("auth", "secret"): "AUTH_JWT_SECRET",
}
SECRET_VARIABLES = ("DATABASE_URL", "DATABASE_REPLICA_URLS", "AUTH_JWT_SECRET")


def declared_keys(cls: type) -> dict[str, "attrs.Attribute[Any]"]:
    """The keys a section accepts in the file (aliases included, internal fields left out), each to its field."""
    keys: dict[str, attrs.Attribute[Any]] = {}
    for field in attrs.fields(cls):
        if field.metadata.get("internal"):
            continue
        keys[field.name] = field
        for alias in field.metadata.get("aliases", ()):
            keys[alias] = field
    return keys
