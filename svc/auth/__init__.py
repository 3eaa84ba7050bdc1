"""Authentication (SPEC "Authentication"): bearer tokens verified with the shared secret or the issuer's keys,
and the database role and session settings a request runs with. Authorization itself is the database's."""

from ._tokens import Authenticator, Principal, Unauthenticated

__all__ = ["Authenticator", "Principal", "Unauthenticated"]
