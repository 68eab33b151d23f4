"""Working-memory windows in Redis, shared by several processes or hosts.

:class:`RedisSessionStore` is the :class:`~mnemolayer.protocols.SessionStore` behind
``Memory(sessions="redis://...")``. It needs the ``redis`` extra
(``pip install -e '.[redis]' in the mnemolayer checkout``, redis-py 5 or later); tested with Redis 7.0.

Key layout, every id quoted with ``urllib.parse.quote(id, safe="")`` so that ``:``,
``*``, ``?``, ``[`` or ``%`` in an id can neither collide with another id nor act as a
glob character (``agent`` is ``""`` for a window without an agent)::

    {prefix}:window:{user}:{agent}:{session}   the window, one JSON document
    {prefix}:user:{user}                       sorted set of that user's window keys,
                                               scored by when each expires (+inf: never)

A save is one ``SET`` of the whole document, so a reader sees the old window or the new
one, never a mix; the document and the user's index change together in one MULTI/EXEC
transaction. With a TTL, every save sets the window's expiry afresh (an idle session
expires ``ttl_seconds`` after its last change) and keeps the index alive at least as
long; index entries of expired windows are dropped by the user's next save.

**Redis Cluster** (``redis+cluster://host:port``, ``rediss+cluster://`` for TLS; any
node's address, the others are discovered; or a ``redis.cluster.RedisCluster`` client):
the user id in both keys is a hash tag, ``{prefix}:window:{{user}}:...`` and
``{prefix}:user:{{user}}``, so that a user's windows and index live in one slot and the
same MULTI/EXEC transactions hold; users spread over the masters. (Ids are quoted, so no
id can contain the braces of a tag.) A cluster keeps its own key layout: windows saved
through a plain ``redis://`` URL are not seen through a cluster URL.

URLs are redis-py's (``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` for
TLS, ``unix:///path/to/socket?db=0``) with two query options of mnemolayer's own,
``prefix=`` (key prefix, default ``mnemolayer``) and ``ttl=`` (seconds), so that one
string (``MNEMOLAYER_SESSIONS``) configures everything::

    redis://127.0.0.1:6379/0?prefix=chatbot&ttl=86400
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote, unquote

from mnemolayer.errors import StoreBusyError, StoreError, ValidationError
from mnemolayer.store.rows import from_iso, iso
from mnemolayer.urls import CLUSTER_SCHEMES, parse_sessions_url
from mnemolayer.urls import check_prefix as _prefix
from mnemolayer.urls import redact_url as redact
from mnemolayer.values import SessionInfo, WindowState, WorkingMessage

if TYPE_CHECKING:
    import redis
    import redis.client

__all__ = ["DEFAULT_PREFIX", "RedisSessionStore", "parse_sessions_url"]

#: Key prefix when neither the URL nor the constructor names one.
DEFAULT_PREFIX = "mnemolayer"
#: Version of the JSON document; a store refuses documents of another version.
FORMAT = 1
#: Seconds a client clock may run ahead of another's before the index forgets a window
#: that is still alive (its entry is dropped only this long after its expiry).
_CLOCK_SKEW_S = 60
_CONNECT_TIMEOUT_S = 5.0
_SOCKET_TIMEOUT_S = 10.0


def _ttl(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError("ttl_seconds", f"expected an int >= 1 or None, got {value!r}")
    return value


def _import_redis() -> Any:
    try:
        import redis
    except ImportError:
        raise ValidationError(
            "sessions",
            "Redis sessions need the redis package: pip install -e '.[redis]' in the mnemolayer checkout",
        ) from None
    return redis


def _is_cluster_client(value: Any) -> bool:
    try:
        from redis.cluster import RedisCluster
    except ImportError:
        return False
    return isinstance(value, RedisCluster)


def _key_part(value: str) -> str:
    return quote(value, safe="")


def _encode(state: WindowState, updated_at: datetime) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "user_id": state.user_id,
            "session_id": state.session_id,
            "agent_id": state.agent_id,
            "budget_tokens": state.budget_tokens,
            "encoding": state.encoding,
            "summary": state.summary,
            "summary_rounds": state.summary_rounds,
            "evicted_count": state.evicted_count,
            "updated_at": iso(updated_at),
            "messages": [
                {
                    "id": m.id,
                    "role": m.role,
                    "content": m.content,
                    "created_at": iso(m.created_at),
                    "pinned": m.pinned,
                    "archived_id": m.archived_id,
                }
                for m in state.messages
            ],
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _decode(raw: bytes | str) -> tuple[WindowState, datetime | None]:
    """The window and its ``updated_at``; ``KeyError`` / ``ValueError`` / ``TypeError``
    when the document is damaged."""
    doc = json.loads(raw)
    if doc.get("format") != FORMAT:
        raise ValueError(f"document format {doc.get('format')!r}, this version reads {FORMAT}")
    messages = []
    for m in doc["messages"]:
        at = from_iso(m["created_at"])
        if at is None:
            raise ValueError("a message without created_at")
        messages.append(
            WorkingMessage(
                str(m["id"]), str(m["role"]), str(m["content"]), at,
                bool(m["pinned"]), m["archived_id"],
            )
        )  # fmt: skip
    state = WindowState(
        user_id=str(doc["user_id"]), session_id=str(doc["session_id"]),
        agent_id=doc["agent_id"], budget_tokens=int(doc["budget_tokens"]),
        encoding=str(doc["encoding"]), messages=messages, summary=str(doc["summary"]),
        summary_rounds=int(doc["summary_rounds"]), evicted_count=int(doc["evicted_count"]),
    )  # fmt: skip
    return state, from_iso(doc.get("updated_at"))


class RedisSessionStore:
    """:class:`~mnemolayer.protocols.SessionStore` in Redis (see the module docstring for
    the key layout, atomicity and expiry).

    Args:
        url_or_client: a ``redis://``, ``rediss://`` or ``unix://`` URL (optionally with
            ``prefix=`` and ``ttl=`` options), or a ``redis.Redis`` client to use as is
            (its connections are then the caller's to close).
        prefix: key prefix; default the URL's ``prefix=``, else :data:`DEFAULT_PREFIX`.
            Stores sharing windows must share the prefix (and should share the TTL).
        ttl_seconds: when set, a window expires this many seconds after its last save;
            default the URL's ``ttl=``, else never.

    Raises:
        ValidationError: a bad URL, client, prefix or option (field ``"sessions"``), a
            bad TTL (``"ttl_seconds"``), an option given both in the URL and as an
            argument, or the ``redis`` package missing.
        StoreError: Redis cannot be reached or refuses the connection (the message names
            the URL without its password).
    """

    def __init__(
        self,
        url_or_client: str | redis.Redis,
        *,
        prefix: str | None = None,
        ttl_seconds: int | None = None,
    ) -> None:
        redis_mod = _import_redis()
        url_prefix = url_ttl = None
        self.cluster = False
        client: Any
        if isinstance(url_or_client, str):
            clean, url_prefix, url_ttl = parse_sessions_url(url_or_client)
            self.url = redact(url_or_client)
            scheme, sep, rest = clean.partition("://")
            self.cluster = scheme in CLUSTER_SCHEMES
            try:
                if self.cluster:
                    self._cluster_url = scheme.removesuffix("+cluster") + sep + rest
                    client = self._open_cluster()
                else:
                    client = redis_mod.Redis.from_url(
                        clean,
                        socket_connect_timeout=_CONNECT_TIMEOUT_S,
                        socket_timeout=_SOCKET_TIMEOUT_S,
                    )
            except ValueError as exc:
                raise ValidationError(
                    "sessions", f"not a valid Redis URL: {self.url} ({exc})"
                ) from None
            self._owns_client = True
        elif _is_cluster_client(url_or_client):
            client = url_or_client
            nodes = ", ".join(f"{n.host}:{n.port}" for n in client.get_nodes()[:3])
            self.url = f"redis cluster client ({nodes})"
            self.cluster = True
            self._owns_client = False
        elif isinstance(url_or_client, redis_mod.Redis):
            client = url_or_client
            kwargs = client.connection_pool.connection_kwargs
            where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
            self.url = f"redis client ({where}, db {kwargs.get('db', 0)})"
            self._owns_client = False
        else:
            raise ValidationError(
                "sessions",
                "expected a Redis URL, a redis.Redis or a redis.cluster.RedisCluster client, "
                f"got {type(url_or_client).__name__}",
            )
        for name, arg, from_url in (("prefix", prefix, url_prefix), ("ttl", ttl_seconds, url_ttl)):
            if arg is not None and from_url is not None and arg != from_url:
                raise ValidationError(
                    "sessions",
                    f"{name} given both in the URL ({from_url!r}) and as an argument ({arg!r})",
                )
        self.prefix = _prefix(
            prefix if prefix is not None else url_prefix or DEFAULT_PREFIX, "prefix"
        )
        self.ttl_seconds = _ttl(ttl_seconds if ttl_seconds is not None else url_ttl)
        # A RedisCluster client offers the same commands, pipelines and transactions
        # for keys of one slot, which is all this store sends it.
        self._client: redis.Redis = cast("redis.Redis", client)
        try:
            self.ping()
        except BaseException:
            self.close()
            raise

    # -- keys ------------------------------------------------------------------------

    def window_key(self, user_id: str, session_id: str, agent_id: str | None) -> str:
        """The Redis key holding one window's JSON document."""
        parts = (self._user_part(user_id), _key_part(agent_id or ""), _key_part(session_id))
        return f"{self.prefix}:window:{':'.join(parts)}"

    def user_key(self, user_id: str) -> str:
        """The Redis key of one user's window index (a sorted set of window keys)."""
        return f"{self.prefix}:user:{self._user_part(user_id)}"

    def window_pattern(self, user_id: str) -> str:
        """A ``SCAN`` pattern matching every window key of ``user_id`` (and no other
        user's: glob characters of the prefix are escaped, ids are quoted)."""
        head = re.sub(r"([*?\[\]\\])", r"\\\1", f"{self.prefix}:window:")
        return f"{head}{self._user_part(user_id)}:*"

    def _user_part(self, user_id: str) -> str:
        """The quoted user id, a hash tag on a cluster (one slot per user)."""
        part = _key_part(user_id)
        return f"{{{part}}}" if self.cluster else part

    # -- SessionStore ----------------------------------------------------------------

    def load(self, user_id: str, session_id: str, agent_id: str | None) -> WindowState | None:
        """The saved window of this scope, or ``None``.

        Raises:
            StoreError: Redis failed, or the saved document is damaged.
        """
        key = self.window_key(user_id, session_id, agent_id)
        with self._redis_errors():
            raw = self.client.get(key)
        return None if raw is None else self._decode(key, raw)[0]

    def save(self, state: WindowState) -> None:
        """Replace the window of ``state``'s scope in one transaction (and reset its TTL).

        Raises:
            StoreError: Redis failed.
        """
        now = datetime.now(UTC)
        key = self.window_key(state.user_id, state.session_id, state.agent_id)
        index = self.user_key(state.user_id)
        doc = _encode(state, now)
        ttl = self.ttl_seconds
        expires = math.inf if ttl is None else now.timestamp() + ttl

        def write(pipe: redis.client.Pipeline) -> None:
            keep_index = None  # ms the index must live; None: it must not expire
            if ttl is not None:
                left = pipe.pttl(index)  # -2: no index yet; -1: it never expires
                # A persistent index holding windows without TTL (saved by a store
                # without one) must stay persistent, or they would drop out of it.
                forever = left == -1 and pipe.zcount(index, "+inf", "+inf") > 0
                keep_index = None if forever else max(int(left), ttl * 1000)
            pipe.multi()
            pipe.set(key, doc, ex=ttl)
            pipe.zadd(index, {key: expires})
            pipe.zremrangebyscore(index, "-inf", f"({now.timestamp() - _CLOCK_SKEW_S}")
            if keep_index is None:
                pipe.persist(index)
            else:
                pipe.pexpire(index, keep_index)

        with self._redis_errors():
            if ttl is None:
                with self.client.pipeline(transaction=True) as pipe:
                    write(pipe)
                    pipe.execute()
            else:  # reads the index's expiry first: WATCHed, retried if it changes meanwhile
                self.client.transaction(write, index)

    def delete(self, user_id: str, session_id: str, agent_id: str | None) -> bool:
        """Forget one window (and its index entry) in one transaction; ``True`` when it
        existed.

        Raises:
            StoreError: Redis failed.
        """
        key = self.window_key(user_id, session_id, agent_id)
        with self._redis_errors(), self.client.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.zrem(self.user_key(user_id), key)
            deleted, _ = pipe.execute()
        return int(deleted) > 0

    def delete_user(self, user_id: str) -> int:
        """Forget every window of one user and the user's index; how many windows there
        were. Retried if a save of that user lands between reading and deleting.

        Raises:
            StoreError: Redis failed.
        """
        index = self.user_key(user_id)

        def drop(pipe: redis.client.Pipeline) -> None:
            keys = pipe.zrange(index, 0, -1)
            pipe.multi()
            if keys:
                pipe.delete(*keys)
            pipe.delete(index)

        with self._redis_errors():
            results = cast("list[Any]", self.client.transaction(drop, index))
        return int(results[0]) if len(results) == 2 else 0

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        """The user's saved windows, most recently saved first (expired ones left out).

        Raises:
            StoreError: Redis failed, or a saved document is damaged.
        """
        with self._redis_errors():
            keys = cast("list[bytes]", self.client.zrange(self.user_key(user_id), 0, -1))
            raws = cast("list[bytes | None]", self.client.mget(keys)) if keys else []
        infos = []
        for key, raw in zip(keys, raws, strict=True):
            if raw is None:  # expired or deleted since the index was read
                continue
            state, updated = self._decode(key, raw)
            infos.append(
                SessionInfo(
                    user_id=state.user_id, session_id=state.session_id,
                    agent_id=state.agent_id, budget_tokens=state.budget_tokens,
                    messages=len(state.messages), evicted_count=state.evicted_count,
                    summary_rounds=state.summary_rounds, updated_at=updated,
                )
            )  # fmt: skip
        infos.sort(key=lambda i: i.updated_at or datetime.min.replace(tzinfo=UTC), reverse=True)
        return infos

    def list_users(self) -> list[str]:
        """Every user with a window index under this prefix, sorted (a SCAN, so it walks
        the whole keyspace: meant for whole-store exports, not for hot paths).

        Raises:
            StoreError: Redis failed.
        """
        head = f"{self.prefix}:user:"
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", head) + "*"
        with self._redis_errors():
            keys = [
                k.decode() if isinstance(k, bytes) else str(k)
                for k in self.client.scan_iter(match=pattern, count=1000)
            ]
        parts = [k[len(head) :] for k in keys if k.startswith(head)]
        if self.cluster:
            parts = [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in parts]
        return sorted({unquote(p) for p in parts})

    # -- connection ------------------------------------------------------------------

    @contextmanager
    def window_lock(
        self,
        user_id: str,
        session_id: str,
        agent_id: str | None,
        *,
        wait_s: float = 30.0,
        lease_s: float = 120.0,
    ) -> Iterator[None]:
        """Hold one window's lock while the block runs, across every process and host
        using this Redis (redis-py's :class:`redis.lock.Lock`: ``SET NX PX`` with a
        random token, released only by its holder), so that two server replicas never
        load, change and save one window at once. The lock expires ``lease_s`` seconds
        after it was taken, so a holder that dies blocks the window that long at most;
        a holder slower than that loses it (the window may then take two writers).

        Raises:
            StoreBusyError: it was not free within ``wait_s`` seconds.
            StoreError: Redis failed.
        """
        from redis.exceptions import LockError

        name = self.window_key(user_id, session_id, agent_id) + ":lock"
        lock = self.client.lock(name, timeout=lease_s, blocking_timeout=wait_s)
        with self._redis_errors():
            got = lock.acquire()
        if not got:
            raise StoreBusyError(f"session window {name} is locked by another request")
        try:
            yield
        finally:
            with contextlib.suppress(LockError), self._redis_errors():
                lock.release()  # LockError: the lease ran out (another holder may have it)

    def ping(self) -> None:
        """Check that Redis answers.

        Raises:
            StoreError: it does not (unreachable, refused, wrong password).
            ValidationError: the URL carries an option redis-py does not know.
        """
        with self._redis_errors():
            try:
                self.client.ping()
            except TypeError as exc:  # redis-py passes unknown URL options to the socket
                raise ValidationError("sessions", f"{self.url}: {exc}") from None

    @property
    def client(self) -> redis.Redis:
        """The redis-py client (a ``RedisCluster`` on a cluster). A closed store opens
        its connections again when used, as a plain redis-py client does; a cluster
        client this store made from a URL is made again for that."""
        if self._client is None:
            self._client = cast("redis.Redis", self._open_cluster())
        return self._client

    def _open_cluster(self) -> Any:
        from redis.cluster import RedisCluster

        with self._redis_errors():
            return RedisCluster.from_url(
                self._cluster_url,
                socket_connect_timeout=_CONNECT_TIMEOUT_S,
                socket_timeout=_SOCKET_TIMEOUT_S,
            )

    def close(self) -> None:
        """Close the connections this store opened (a client passed in is left open)."""
        if self._owns_client and self._client is not None:
            self._client.close()
            if self.cluster:  # a closed RedisCluster cannot reconnect: made anew if used
                self._client = None  # type: ignore[assignment]

    def __enter__(self) -> RedisSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"RedisSessionStore({self.url!r}, prefix={self.prefix!r}, "
            f"ttl_seconds={self.ttl_seconds}, cluster={self.cluster})"
        )

    # -- internals -------------------------------------------------------------------

    def _decode(self, key: bytes | str, raw: bytes | str) -> tuple[WindowState, datetime | None]:
        try:
            return _decode(raw)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            name = key.decode() if isinstance(key, bytes) else key
            raise StoreError(
                f"session window {name} in Redis at {self.url} is damaged: {exc!r}"
            ) from exc

    @contextmanager
    def _redis_errors(self) -> Iterator[None]:
        """Map redis-py's errors to :class:`StoreError`, naming the URL (no password)."""
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import RedisClusterException, RedisError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        try:
            yield
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreError(f"cannot reach Redis at {self.url}: {exc}") from exc
        except RedisClusterException as exc:
            raise StoreError(f"Redis Cluster at {self.url} failed: {exc}") from exc
        except RedisError as exc:
            raise StoreError(f"Redis at {self.url} failed: {exc}") from exc
