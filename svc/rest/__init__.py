"""The REST front end (layer 7), in stages as PostgREST's: a request is parsed into an `ApiRequest` (`_parse*.py`),
planned onto the plan IR (`_plan*.py`), run through the one pipeline, and answered around the database's JSON
(`_respond.py`); `_endpoint.py` hands each stage its input. And the OpenAPI document built from the model
(`_openapi*.py`). Never imports the GraphQL front end: shared planning lives in `svc/plan`."""

from ._endpoint import RestEndpoint
from ._messages import RestRequest, RestResponse
from ._openapi import build_openapi, openapi_json, openapi_yaml, read_openapi
from ._openapi_diff import diff_openapi
from ._resources import FunctionRoute, Kind, Resource, RestIndex, Target

__all__ = [
    "FunctionRoute",
    "Kind",
    "Resource",
    "RestEndpoint",
    "RestIndex",
    "RestRequest",
    "RestResponse",
    "Target",
    "build_openapi",
    "diff_openapi",
    "openapi_json",
    "openapi_yaml",
    "read_openapi",
]
