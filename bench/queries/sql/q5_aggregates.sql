-- Q5 grouped aggregates: payments by month (date_trunc in the session time zone) and staff_id, each group's
-- count, sum and avg of amount (numeric as text), ordered by the keys, plus the connection's totalCount.
-- One scan of payment: GROUPING SETS gives the groups and the grand total row (grouping(...) = 3) together.
with g as (
  select date_trunc('month', p.payment_date) as month, p.staff_id,
         grouping(date_trunc('month', p.payment_date), p.staff_id) as total_row,
         count(*) as n, sum(p.amount) as sum_amount, avg(p.amount) as avg_amount
  from public.payment p
  group by grouping sets ((), (date_trunc('month', p.payment_date), p.staff_id)))
select json_build_object('data', json_build_object('paymentsConnection', json_build_object(
  'totalCount', (select g.n from g where g.total_row = 3),
  'groupedAggregates', coalesce((select json_agg(json_build_object(
      'keys', json_build_array(g.month, g.staff_id), 'count', g.n,
      'sum', json_build_object('amount', g.sum_amount::text),
      'avg', json_build_object('amount', g.avg_amount::text)) order by g.month, g.staff_id)
    from g where g.total_row = 0), '[]'::json))));
