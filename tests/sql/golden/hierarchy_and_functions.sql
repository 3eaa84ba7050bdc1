select (select (select json_build_object('name', "t1"."name", 'ancestors', "t8".j)
  from (select "t2"."name", "t2"."parent_id", "t2"."id" from "app_public"."categories" "t2"
  where (("t2"."id" = %(p0)s::integer))) "t1"
  left join lateral (select (select coalesce(json_agg("t7".j), '[]'::json)
  from (select json_build_object('name', "t6"."name") as j
  from (with recursive "t4" as (select "t3".*, 1 as __depth, array[("t3"."id")::text] as __seen from "app_public"."categories" "t3"
  where "t3"."id" = "t1"."parent_id" union all select "t3".*, "t5".__depth + 1, "t5".__seen || ("t3"."id")::text from "app_public"."categories" "t3" join "t4" "t5" on "t3"."id" = "t5"."parent_id"
  where not (("t3"."id")::text = any("t5".__seen)) and "t5".__depth < %(p1)s::integer) select * from "t4") "t6"
  order by "t6".__depth) "t7") as j) "t8" on true
  limit 1))::text, (select (select json_build_object('booksSince', "t14".j)
  from (select "t10" as __row from "app_public"."authors" "t10"
  where (("t10"."id" = %(p2)s::integer))) "t9"
  left join lateral (select (select coalesce(json_agg("t13".j), '[]'::json)
  from (select json_build_object('title', "t11"."title", 'priceWithTax', "app_public"."books_price_with_tax"("t11".__row, "rate" => %(p5)s::numeric)::text) as j
  from (select "t12".*, "t12" as __row from "app_public"."authors_books_since"("t9".__row, "year" => %(p3)s::integer) "t12"
  limit %(p4)s::bigint) "t11") "t13") as j) "t14" on true
  limit 1))::text, (select (select coalesce(json_agg("t17".j), '[]'::json)
  from (select json_build_object('genre', (case "t15"."genre"::text when 'fiction' then 'FICTION' when 'non-fiction' then 'NON_FICTION' when 'poetry' then 'POETRY' else "t15"."genre"::text end), 'books', "t15"."books"::text) as j
  from (select "t16".* from "app_public"."genre_counts"() "t16") "t15") "t17"))::text, (select to_json("app_public"."add"("a" => %(p6)s::integer, "b" => %(p7)s::integer)))::text
