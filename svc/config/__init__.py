"""Configuration: svc.yaml and the environment, merged per mode, checked, and structured into frozen classes.

Layer 1 (ARCHITECTURE.md). `load_config` is the one entry point; `config_json_schema` describes the same
declarations for editors and `svc export-config-schema`.
"""

from ._changes import apply_changes
from ._load import MODES, ConfigError, LoadedConfig, Secrets, load_config, read_environment, read_secrets
from ._model import (
    DEFAULT_CORS_HEADERS,
    DEFAULT_CORS_METHODS,
    MODE_DEFAULTS,
    AuthConfig,
    ColumnConfig,
    Config,
    CorsConfig,
    DatabaseConfig,
    EntityConfig,
    ErrorsConfig,
    EventsConfig,
    ForeignKeyConfig,
    FunctionConfig,
    HeadersConfig,
    LimitsConfig,
    RateConfig,
    RateLimitConfig,
    ReloadConfig,
    ReplicasConfig,
    ScheduleConfig,
    SearchConfig,
    TypeConfig,
    WebhookTargetConfig,
)
from ._schema import config_json_schema
from ._types import Duration, Json

__all__ = [
    "AuthConfig",
    "DEFAULT_CORS_HEADERS",
    "DEFAULT_CORS_METHODS",
    "MODES",
    "MODE_DEFAULTS",
    "ColumnConfig",
    "Config",
    "ConfigError",
    "CorsConfig",
    "DatabaseConfig",
    "ReplicasConfig",
    "Duration",
    "Json",
    "EntityConfig",
    "ErrorsConfig",
    "EventsConfig",
    "ForeignKeyConfig",
    "FunctionConfig",
    "HeadersConfig",
    "LimitsConfig",
    "LoadedConfig",
    "RateConfig",
    "RateLimitConfig",
    "ReloadConfig",
    "ScheduleConfig",
    "SearchConfig",
    "Secrets",
    "TypeConfig",
    "WebhookTargetConfig",
    "apply_changes",
    "config_json_schema",
    "load_config",
    "read_environment",
    "read_secrets",
]
