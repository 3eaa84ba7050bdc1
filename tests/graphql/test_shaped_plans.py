"""Plans kept per variable shape (ARCHITECTURE "Shape-keyed SQL"): what a planning run looks at keys the plan, what
it only binds is bound anew for each request, and nothing the plan depends on is taken from another request."""

from graphql import build_schema, parse
from graphql.execution.values import get_variable_values

from svc.graphql._query_planner import PlannedQuery
from svc.graphql._shaped_plans import ShapedPlans
from svc.plan import Params, ReadPlan, RootField, Watch, plain

SCHEMA = build_schema("type Query { echo(text: String, n: Int, flag: Boolean): String }")
QUERY = "query($text: String, $n: Int, $flag: Boolean) { echo(text: $text, n: $n, flag: $flag) }"


def test_a_stand_in_behaves_as_its_value_and_records_being_read():
    watch = Watch()
    text, number = watch.stand_in("abc"), watch.stand_in(7)
    assert isinstance(text, str) and isinstance(number, int)
    assert watch.looked == set()
    assert plain([text, (number,)]) == ["abc", (7,)] and type(plain(text)) is str
    assert text.upper() == "ABC"
    assert watch.looked == {0}
    assert number < 10
    assert watch.looked == {0, 1}


def test_bind_converts_the_plain_value_and_keeps_how():
    watch, params = Watch(), Params()
    given = watch.stand_in("abc")
    param = params.bind(given, str.upper, "text")
    assert params.values == ["ABC"] and type(params.values[0]) is str
    assert params.binders == [(param.index, 0, str.upper)]
    assert watch.looked == set()  # converting the plain value reads no stand-in
    params.bind([watch.stand_in("x"), watch.stand_in("y")], ",".join, "text")
    assert params.values[1] == "x,y" and params.binders[1][1] == (1, 2)
    params.bind("plain", str.upper, "text")
    assert len(params.binders) == 2  # a value not watched has no binder


class Planner:
    """A planner that binds `n`, adds a value of its own when `flag` is true, and writes the `text` argument into
    the plan as a constant (what the real planner never does with a value: here to show that such a plan is not
    kept)."""

    def __init__(self) -> None:
        self.runs: list[dict] = []

    def plan(self, operation, fragments, variables) -> PlannedQuery:
        given = variables.coerced
        self.runs.append({name: plain(value) for name, value in given.items()})
        params = Params()
        if given.get("n") is not None:
            params.bind(given["n"], lambda n: n * 2, "integer")
        if given.get("flag"):
            params.add("flagged", "text")
        return PlannedQuery(ReadPlan((RootField("echo", constant=given.get("text")),)), params, (), ("echo",))


def planned(plans: ShapedPlans, variables: dict) -> PlannedQuery:
    operation = parse(QUERY).definitions[0]
    coerced = get_variable_values(SCHEMA, operation.variable_definitions, variables)
    return plans.planned(QUERY, operation, {}, coerced)


def test_a_bound_value_is_bound_per_request_to_the_plan_of_its_shape():
    planner = Planner()
    plans = ShapedPlans(SCHEMA, planner, size=10)
    one = planned(plans, {"n": 1})
    two = planned(plans, {"n": 5})
    assert (one.params.values, two.params.values) == ([2], [10])
    assert two.plan == one.plan
    assert len(planner.runs) == 1


def test_booleans_and_nulls_are_part_of_the_shape():
    planner = Planner()
    plans = ShapedPlans(SCHEMA, planner, size=10)
    assert planned(plans, {"n": 1}).params.values == [2]
    assert planned(plans, {"n": 1, "flag": True}).params.values == [2, "flagged"]
    assert planned(plans, {"n": None}).params.values == []
    assert planned(plans, {"n": 3, "flag": True}).params.values == [6, "flagged"]
    assert planned(plans, {"n": 4, "flag": False}).params.values == [8]
    assert len(planner.runs) == 4


def test_a_plan_holding_a_value_is_planned_for_each_request_with_plain_values():
    planner = Planner()
    plans = ShapedPlans(SCHEMA, planner, size=10)
    one = planned(plans, {"text": "a", "n": 1})
    assert one.plan.roots[0].constant == "a" and type(one.plan.roots[0].constant) is str
    two = planned(plans, {"text": "b", "n": 1})
    assert (two.plan.roots[0].constant, two.params.values) == ("b", [2])
    # The first request is planned twice (watched, then plain), every later one once.
    assert [run["text"] for run in planner.runs] == ["a", "a", "b"]


def test_a_plan_that_binds_nothing_is_planned_per_request():
    planner = Planner()
    plans = ShapedPlans(SCHEMA, planner, size=10)
    planned(plans, {"flag": True})
    planned(plans, {"flag": True})
    assert len(planner.runs) == 2
