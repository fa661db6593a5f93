// Statements whose values should not change their plan. PostgreSQL plans a prepared statement for its
// values at each of its first five runs, then keeps one generic plan only if that plan's estimated cost
// is no worse than theirs. Where a value's statistics skew the estimate, it never is, and the statement
// is planned afresh at every run, though every plan is the same index range: a merchant with 96 % of the
// orders had its list page of 100 planned at each call (0.36 ms on PostgreSQL; on PGlite a page of 100
// took 2.0 ms that way and 1.3-1.4 ms with the plan kept). A value read through a sub-select is one the
// planner does not see, in any plan: the estimates are the same for every value, so the generic plan
// costs no more, and after five runs it is kept (pages.test.ts, batched-reads.test.ts).
//
// Only for values that never call for another plan: a batch of primary keys; the owner of the rows a
// statement reads by the one index that starts with it, and a cursor's position in that index (the
// feed, a list page without filters). Where a filter makes another index that starts with the owner a
// candidate (deposit_orders' status and updatedSince), its value is seen, and so is a filter whose
// selectivity depends on its value.

/** `$n` as a value the planner does not see: `(SELECT $n::type)`, read once per run. */
export function unplannedValue(parameter: string, type: string): string {
  return `(SELECT ${parameter}::${type})`;
}
