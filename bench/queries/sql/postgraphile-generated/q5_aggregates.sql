-- statement 1
select
(count(*))::text as "0"
from "public"."payment" as __payment__;

-- statement 2
select
(count(distinct __payment__."payment_id"))::text as "0",
(coalesce(sum(__payment__."amount"), '0'))::text as "1",
(avg(__payment__."amount"))::text as "2",
to_char(date_trunc('month', __payment__."payment_date"), 'YYYY-MM-DD"T"HH24:MI:SS.USTZH:TZM'::text) as "3",
__payment__."staff_id"::text as "4"
from "public"."payment" as __payment__
group by date_trunc('month', __payment__."payment_date"), __payment__."staff_id";
