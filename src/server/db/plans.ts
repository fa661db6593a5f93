// Statements whose values should not change their plan. PostgreSQL plans a prepared statement for its
// values at each of its first five runs, then keeps one generic plan only if that plan's estimated cost
// is no worse than theirs. Where a value's statistics skew the estimate, it never is, and the statement
// is planned afresh at every run, though every plan is the same index range: a merchant with 96 % of the
// orders had its list page of 100 planned at each call (0.36 ms on PostgreSQL; on PGlite a page of 100
// took 2.0 ms that way and 1.3 ms with the plan kept). A value read through a sub-select is one the
// planner does not see, in any plan: the estimates are the same for every value, so the generic plan
// costs no more, and after five runs it is kept (pages.test.ts, batched-reads.test.ts).
//
// Only for values that never call for another plan: the owner of the rows a statement reads by an index
// that starts with it, a cursor's position in that index, a batch of primary keys. A filter whose
// selectivity depends on its value (a status, a time bound) stays a plain parameter.

/** `$n` as a value the planner does not see: `(SELECT $n::type)`, read once per run. */
export function unplannedValue(parameter: string, type: string): string {
  return `(SELECT ${parameter}::${type})`;
}
