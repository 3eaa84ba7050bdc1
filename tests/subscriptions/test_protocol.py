"""graphql-transport-ws by hand (trio-websocket), for what the reference client never sends: malformed messages and
each protocol violation's close code; many subscriptions on one socket, and the statements they cost (ONE per
round for one shape and one session, SPEC "Subscriptions"); the subscription limits; rate limits counting each
subscribe."""

import trio

from tests.subscriptions.support import (
    INTERVAL,
    NOTES,
    closed_with,
    health,
    raw_socket,
    sql,
    subscriptions_service,
    token,
)

DATABASE_FIXTURES = ["auth.sql"]
POST = "subscription($id: Int!) { post(rowId: $id) { rowId title } }"


async def test_protocol_violations_close_with_their_codes(tmp_path, database_url):
    async with subscriptions_service(tmp_path, database_url, subscriptions={"init_timeout": "500ms"}) as service:
        cases = [
            ([], "not json", 4400),
            ([], {"no": "type"}, 4400),
            ([], {"type": "subscribe", "id": "1", "payload": {"query": NOTES}}, 4401),
            (["init"], {"type": "connection_init"}, 4429),
            (["init"], {"type": "subscribe", "id": "", "payload": {"query": NOTES}}, 4400),
            (["init"], {"type": "subscribe", "id": "1", "payload": {"query": 7}}, 4400),
            (["init"], {"type": "next", "id": "1", "payload": {}}, 4400),
        ]
        for before, message, code in cases:
            async with raw_socket(service) as socket:
                if before:
                    await socket.init()
                await socket.send(message)
                assert (await closed_with(socket))[0] == code, message
        async with raw_socket(service) as socket:  # no connection_init in time
            assert await closed_with(socket) == (4408, "Connection initialisation timeout")
        async with raw_socket(service, subprotocols=("graphql-ws",)) as socket:  # the legacy protocol
            assert (await closed_with(socket))[0] == 4406
        async with raw_socket(service) as socket:  # a bad token
            await socket.send({"type": "connection_init", "payload": {"Authorization": "Bearer nope"}})
            assert (await closed_with(socket))[0] == 4403
        # The service goes on serving: ping, a subscription, an id used twice.
        async with raw_socket(service) as socket:
            await socket.init({"token": token("alice")})
            await socket.send({"type": "ping", "payload": {"n": 1}})
            assert await socket.receive() == {"type": "pong", "payload": {"n": 1}}
            await socket.send({"type": "subscribe", "id": "a", "payload": {"query": POST, "variables": {"id": 1}}})
            assert (await socket.receive())["payload"] == {"data": {"post": {"rowId": 1, "title": "Hello"}}}
            await socket.send({"type": "subscribe", "id": "a", "payload": {"query": POST, "variables": {"id": 1}}})
            assert await closed_with(socket) == (4409, "Subscriber for a already exists")
        with trio.fail_after(5):  # the closed socket's subscription ended
            while (await health(service))["subscriptions"]["active"]:
                await trio.sleep(0.05)


async def test_200_subscribers_of_one_shape_cost_one_statement_per_round(tmp_path, database_url):
    sql(database_url, "insert into app.posts select n, 'post ' || n from generate_series(2, 200) n")
    async with subscriptions_service(tmp_path, database_url, subscriptions={"max_per_client": 1000}) as service:
        async with raw_socket(service) as socket:
            await socket.init()
            for n in range(1, 201):
                await socket.send(
                    {"type": "subscribe", "id": str(n), "payload": {"query": POST, "variables": {"id": n}}}
                )
            first = {}
            while len(first) < 200:
                message = await socket.receive()
                first[message["id"]] = message["payload"]["data"]["post"]
            assert first["7"] == {"rowId": 7, "title": "post 7"}
            before = await health(service)
            await trio.sleep(10 * INTERVAL)
            after = await health(service)
            rounds = after["subscriptions"]["rounds"] - before["subscriptions"]["rounds"]
            assert rounds >= 5
            # /health's own reads send nothing; the rounds are all that ran (a round may be under way at either
            # read: its statement counted, the round not yet). Unbatched, it would be 200 a round.
            assert abs((after["statements"] - before["statements"]) - rounds) <= 1
            assert after["subscriptions"]["lastRoundStatements"] == 1

            # One change: exactly its subscriber hears of it.
            sql(database_url, "update app.posts set title = 'changed' where id = 42")
            message = await socket.receive(timeout=2 * INTERVAL + 2)
            assert message == {
                "id": "42",
                "type": "next",
                "payload": {"data": {"post": {"rowId": 42, "title": "changed"}}},
            }
            with trio.move_on_after(4 * INTERVAL):
                message = await socket.receive()
                raise AssertionError(f"a message without a change: {message}")

            # `complete` ends one subscription, and only it.
            await socket.send({"type": "complete", "id": "42"})
            await trio.sleep(2 * INTERVAL)
            assert (await health(service))["subscriptions"]["active"] == 199


async def test_two_sessions_are_never_batched_and_each_sees_its_rows(tmp_path, database_url):
    sql(database_url, "insert into app.notes (owner, body) values ('dave', 'dave 1'), ('erin', 'erin 1')")
    async with subscriptions_service(tmp_path, database_url) as service:
        async with raw_socket(service) as dave, raw_socket(service) as erin:
            await dave.init({"Authorization": f"Bearer {token('dave')}"})
            await erin.init({"Authorization": f"Bearer {token('erin')}"})
            for socket in (dave, erin):
                await socket.send({"type": "subscribe", "id": "1", "payload": {"query": NOTES}})
            assert (await dave.receive())["payload"]["data"]["notes"] == [{"body": "dave 1"}]
            assert (await erin.receive())["payload"]["data"]["notes"] == [{"body": "erin 1"}]
            await trio.sleep(3 * INTERVAL)
            assert (await health(service))["subscriptions"]["lastRoundStatements"] == 2
            sql(database_url, "insert into app.notes (owner, body) values ('erin', 'erin 2')")
            assert (await erin.receive())["payload"]["data"]["notes"] == [{"body": "erin 1"}, {"body": "erin 2"}]
            with trio.move_on_after(3 * INTERVAL):
                message = await dave.receive()
                raise AssertionError(f"dave heard of erin's change: {message}")


async def test_subscription_limits_per_client_and_per_instance(tmp_path, database_url):
    limits = {"subscriptions": {"max_per_client": 2, "max_active": 3}}
    async with subscriptions_service(tmp_path, database_url, **limits) as service:
        async with raw_socket(service) as alice, raw_socket(service) as bob:
            await alice.init({"token": token("alice")})
            await bob.init({"token": token("bob")})
            payload = {"query": POST, "variables": {"id": 1}}
            for n in (1, 2, 3):
                await alice.send({"type": "subscribe", "id": str(n), "payload": payload})
            messages = [await alice.receive() for _ in range(3)]
            (refused,) = [m for m in messages if m["type"] == "error"]
            assert refused["payload"][0]["extensions"]["code"] == "TOO_MANY_SUBSCRIPTIONS"
            assert "subscriptions.max_per_client" in refused["payload"][0]["message"]
            await bob.send({"type": "subscribe", "id": "1", "payload": payload})
            assert (await bob.receive())["type"] == "next"
            await bob.send({"type": "subscribe", "id": "2", "payload": payload})
            refused = await bob.receive()
            assert "subscriptions.max_active" in refused["payload"][0]["message"]
            # The refused ones cost nothing: the others stay live, and alice may subscribe again after one ends.
            await alice.send({"type": "complete", "id": "1"})
            await trio.sleep(INTERVAL)
            await alice.send({"type": "subscribe", "id": "4", "payload": payload})
            assert (await alice.receive())["type"] == "next"


async def test_each_subscribe_counts_as_a_request_for_rate_limits(tmp_path, database_url):
    rate = {"limits": {"rate_limit": {"enabled": True, "anonymous": {"requests_per_minute": 2}}}}
    async with subscriptions_service(tmp_path, database_url, **rate) as service:
        async with raw_socket(service) as socket:
            await socket.init()
            for n in (1, 2, 3):
                await socket.send(
                    {"type": "subscribe", "id": str(n), "payload": {"query": POST, "variables": {"id": 1}}}
                )
            messages = [await socket.receive() for _ in range(3)]
            errors = [m for m in messages if m["type"] == "error"]
            assert len(errors) == 1 and errors[0]["payload"][0]["extensions"]["code"] == "RATE_LIMITED"
        # The same bucket as HTTP requests.
        assert (await service.client.post("/graphql", json={"query": "{ posts { id } }"})).status_code == 429
