// A database whose every statement, also those of a transaction (on PostgreSQL a fill runs in one), is
// shown to `before` first: to count or record them, or to fail one (when `before` throws).
import type { Database, Sql } from '../../src/server/db/database.js';

export function observedStatements(db: Database, before: (text: string) => void): Pick<Database, 'query' | 'transaction'> {
  const { query, transaction } = db;
  const observed = (run: Sql['query']): Sql['query'] => (text, params) => {
    try {
      before(text);
    } catch (error) {
      return Promise.reject(error);
    }
    return run(text, params);
  };
  return { query: observed(query), transaction: (work) => transaction((tx) => work({ query: observed(tx.query) })) };
}
