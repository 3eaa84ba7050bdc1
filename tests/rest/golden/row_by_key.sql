select (select (select json_build_object('id', "t1"."id", 'title', "t1"."title", 'genre', (case "t1"."genre"::text when 'fiction' then 'FICTION' when 'non-fiction' then 'NON_FICTION' when 'poetry' then 'POETRY' else "t1"."genre"::text end), 'tags', "t1"."tags", 'available', (case when "t1"."available" is null then null else json_build_object('start', (case when lower_inf("t1"."available") or isempty("t1"."available") then null else json_build_object('value', lower("t1"."available"), 'inclusive', lower_inc("t1"."available")) end), 'end', (case when upper_inf("t1"."available") or isempty("t1"."available") then null else json_build_object('value', upper("t1"."available"), 'inclusive', upper_inc("t1"."available")) end)) end), 'details', "t1"."details", 'author', "t5".j)
  from (select "t2"."id", "t2"."title", "t2"."genre", "t2"."tags", "t2"."available", "t2"."details", "t2"."author_id" from "app_public"."books" "t2"
  where ("t2"."id" = %(p0)s::integer)) "t1"
  left join lateral (select (select json_build_object('id', "t3"."id", 'name', "t3"."name")
  from (select "t4"."id", "t4"."name" from "app_public"."authors" "t4"
  where "t4"."id" = "t1"."author_id") "t3"
  limit 1) as j) "t5" on true
  limit 1))::text, (select (select json_build_object('v', "t6".__xmin::text)
  from (select "t7".xmin as __xmin from "app_public"."books" "t7"
  where ("t7"."id" = %(p0)s::integer)) "t6"
  limit 1))::text
