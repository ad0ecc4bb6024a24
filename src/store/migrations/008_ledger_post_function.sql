-- Ledger posting in one round trip (src/billing/ledger/ledger.ts calls this; see the contract there).
--
-- ledger_post_many() posts a list of balanced transactions ("postings") in input order, with the rules
-- ledger.ts used to apply over several statements:
--   1. lock the non-system wallets of all legs in id order (FOR UPDATE); system wallets are only read;
--   2. look up the idempotency keys (after the locks, with a fresh snapshot: a concurrent first post
--      sharing a locked wallet has committed by now): same key + same content (currency, source,
--      multiset of wallet:amount legs) -> replay of the first transaction; other content -> conflict;
--   3. per posting, in order: unknown wallet, currency mismatch, replay/conflict, then the floor: a
--      prepaid wallet's net debit may not take its running balance below 0 unless overdraft;
--   4. insert the transactions (ON CONFLICT on the key: a concurrent first post that touched only
--      system wallets is waited for), the entries with balance_after, then the cached balances and
--      overdue_since (set while a prepaid wallet is below 0, cleared by the first posting back to >= 0).
--
-- Refusals are returned, not raised, and are decided before anything is written, so a caller's
-- transaction stays usable after a LedgerError. p_atomic: the first refusal ends the call and nothing
-- is written (post, postMany); otherwise each posting stands alone: a refused one is skipped and the
-- later ones continue from the balances without it (the same outcome as posting them one by one in
-- that order; used to coalesce concurrent post() calls into one transaction).
--
-- p_wallets: the distinct wallets of all legs. Legs are flat arrays grouped by posting in input order:
-- p_leg_posting = 1-based index of the posting, p_leg_slot = 1-based index of the wallet in p_wallets.
-- Amounts are checked by the caller (non-zero integers, each posting sums to 0) and again by the
-- constraints and the balancing trigger of migration 004.
--
-- Result: one row per entry of each created or replayed posting (ordered by posting, entry id), and
-- one row per refused posting: r_outcome = created | replayed | insufficient_funds | unknown_wallet |
-- currency_mismatch | idempotency_conflict, r_detail = the refusal's details.
--
-- Raised errors (the statement fails as a whole): SQLSTATE LG409 = an idempotency conflict that can't
-- be returned: a key twice in one call, or a race lost to a concurrent post of one of the keys found
-- only after other postings of the call were written. LG500 = malformed input (legs not grouped by
-- posting or with fewer than two per posting, a slot out of range, a wallet twice in p_wallets).

CREATE FUNCTION ledger_post_many(
  p_id uuid[], p_currency text[], p_source_type text[], p_source_id text[], p_key text[], p_memo text[],
  p_wallets uuid[], p_leg_posting int[], p_leg_slot int[], p_leg_amount bigint[],
  p_overdraft boolean[], p_atomic boolean)
RETURNS TABLE (
  r_ord int, r_outcome text, r_detail jsonb,
  tx_id uuid, tx_seq bigint, tx_currency text, tx_source_type text, tx_source_id text, tx_key text, tx_memo text, tx_created_at timestamptz,
  e_id bigint, e_wallet uuid, e_amount bigint, e_after bigint)
LANGUAGE plpgsql
-- every statement below has one good plan whatever the array sizes (index lookups per element, hash
-- joins between arrays): generic plans spare planning them again on every call
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  n int := coalesce(cardinality(p_key), 0);
  nw int := coalesce(cardinality(p_wallets), 0);
  nl int := coalesce(cardinality(p_leg_slot), 0);
  -- local copies of the inputs: plpgsql keeps arrays in variables expanded (O(1) subscripts)
  ids uuid[] := p_id;
  cur text[] := p_currency;
  wid uuid[] := p_wallets;
  lp int[] := p_leg_posting;
  ls int[] := p_leg_slot;
  la bigint[] := p_leg_amount;
  -- per wallet (p_wallets): whether it exists, its currency, policy, running balance (NULL: system), whether it changes
  w_known boolean[];
  w_cur text[];
  w_pol text[];
  w_bal bigint[];
  w_touched boolean[] := array_fill(false, ARRAY[nw]);
  -- per posting: its first leg and number of legs, the transaction already holding its key, outcome,
  -- refusal details, the transaction returned, whether it is new
  o_first int[] := array_fill(0, ARRAY[n]);
  o_legs int[] := array_fill(0, ARRAY[n]);
  ex_id uuid[];
  o_outcome text[] := array_fill(NULL::text, ARRAY[n]);
  o_detail jsonb[] := array_fill(NULL::jsonb, ARRAY[n]);
  o_tid uuid[] := array_fill(NULL::uuid, ARRAY[n]);
  o_fresh boolean[] := array_fill(false, ARRAY[n]);
  -- per leg: written as an entry, its balance_after
  l_keep boolean[] := array_fill(false, ARRAY[nl]);
  l_after bigint[] := array_fill(NULL::bigint, ARRAY[nl]);
  nfresh int := 0;
  nother int := 0;
  -- what the inserts returned, in input order (seq and entry ids ascend with it)
  f_ids uuid[];
  f_seq bigint[];
  f_at timestamptz[];
  e_ids bigint[];
  ninserted int;
  lost_any boolean := false;
  i int; j int := 1; k int; m int; s int; sk int; fi int; ki int;
  net bigint;
  err text;
  det jsonb;
  same boolean;
  wtid uuid;
  user_legs boolean;
  st text[]; si text[]; ky text[]; mm text[];
BEGIN
  IF n = 0 THEN RETURN; END IF;
  IF n > 1 THEN
    IF (SELECT count(DISTINCT x COLLATE "C") FROM unnest(p_key) x) < n THEN
      RAISE EXCEPTION 'ledger: an idempotency key appears twice in one batch' USING ERRCODE = 'LG409';
    END IF;
  END IF;
  IF nw = 2 THEN
    IF wid[1] = wid[2] THEN RAISE EXCEPTION 'ledger: a wallet appears twice in p_wallets' USING ERRCODE = 'LG500'; END IF;
  ELSIF nw > 2 THEN
    IF (SELECT count(DISTINCT x) FROM unnest(p_wallets) x) < nw THEN
      RAISE EXCEPTION 'ledger: a wallet appears twice in p_wallets' USING ERRCODE = 'LG500';
    END IF;
  END IF;

  -- 1. user wallets under row lock in id order (no deadlocks between posts); system wallets are only read
  PERFORM 1 FROM ledger_wallets w WHERE w.id = ANY(p_wallets) AND w.owner_kind <> 'platform' ORDER BY w.id FOR UPDATE;

  -- 2. the wallets and the keys already used (a new snapshot, taken after the locks: a concurrent first
  --    post sharing one of our user wallets has committed by now)
  SELECT wl.known, wl.cur, wl.pol, wl.bal, kl.ex
    INTO w_known, w_cur, w_pol, w_bal, ex_id
    FROM (SELECT array_agg(w.id IS NOT NULL ORDER BY v.o) AS known, array_agg(w.currency ORDER BY v.o) AS cur,
                 array_agg(w.policy ORDER BY v.o) AS pol, array_agg(w.balance ORDER BY v.o) AS bal
            FROM unnest(p_wallets) WITH ORDINALITY v(id, o)
            LEFT JOIN LATERAL (SELECT x.id, x.currency, x.policy, x.balance FROM ledger_wallets x WHERE x.id = v.id) w ON true) wl,
         (SELECT array_agg(t.id ORDER BY kk.o) AS ex
            FROM unnest(p_key) WITH ORDINALITY kk(ky, o)
            LEFT JOIN LATERAL (SELECT x.id FROM ledger_transactions x WHERE x.idempotency_key = kk.ky) t ON true) kl;

  -- 3. the postings in input order
  FOR i IN 1..n LOOP
    s := j;
    WHILE j <= nl AND lp[j] = i LOOP j := j + 1; END LOOP;
    IF j - s < 2 THEN
      RAISE EXCEPTION 'ledger: posting % has % legs (legs are grouped by posting, at least two each)', i, j - s USING ERRCODE = 'LG500';
    END IF;
    o_first[i] := s; o_legs[i] := j - s;
    err := NULL;
    FOR k IN s..j - 1 LOOP
      sk := ls[k];
      IF sk IS NULL OR sk < 1 OR sk > nw THEN
        RAISE EXCEPTION 'ledger: leg % names wallet slot %, not one of 1..%', k, sk, nw USING ERRCODE = 'LG500';
      END IF;
      IF NOT w_known[sk] THEN
        err := 'unknown_wallet'; det := jsonb_build_object('wallet_id', wid[sk]); EXIT;
      END IF;
      IF w_cur[sk] <> cur[i] THEN
        err := 'currency_mismatch'; det := jsonb_build_object('wallet_id', wid[sk], 'currency', w_cur[sk]); EXIT;
      END IF;
    END LOOP;
    IF err IS NULL AND ex_id[i] IS NOT NULL THEN
      -- same content: currency, source and the multiset of wallet:amount legs
      SELECT t.currency = cur[i] AND t.source_type = p_source_type[i] AND t.source_id = p_source_id[i]
             AND (SELECT array_agg(q.z ORDER BY q.z) FROM (SELECT e.wallet_id::text || ':' || e.amount AS z FROM ledger_entries e WHERE e.transaction_id = t.id) q)
               = (SELECT array_agg(q.z ORDER BY q.z) FROM (SELECT wid[ls[g.x]]::text || ':' || la[g.x] AS z FROM generate_series(s, j - 1) g(x)) q)
        INTO same FROM ledger_transactions t WHERE t.id = ex_id[i];
      IF coalesce(same, false) THEN
        o_outcome[i] := 'replayed'; o_tid[i] := ex_id[i]; nother := nother + 1;
        CONTINUE;
      END IF;
      err := 'idempotency_conflict'; det := jsonb_build_object('transaction_id', ex_id[i]);
    END IF;
    IF err IS NULL AND NOT p_overdraft[i] THEN
      FOR k IN s..j - 1 LOOP
        sk := ls[k];
        IF w_pol[sk] = 'prepaid' THEN
          net := 0;
          FOR m IN s..j - 1 LOOP
            IF ls[m] = sk THEN net := net + la[m]; END IF;
          END LOOP;
          IF net < 0 AND w_bal[sk] + net < 0 THEN
            err := 'insufficient_funds'; det := jsonb_build_object('wallet_id', wid[sk], 'balance', w_bal[sk], 'needed', -net); EXIT;
          END IF;
        END IF;
      END LOOP;
    END IF;
    IF err IS NOT NULL THEN
      IF p_atomic THEN
        -- nothing has been written
        RETURN QUERY SELECT i, err, det, NULL::uuid, NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz, NULL::bigint, NULL::uuid, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      o_outcome[i] := err; o_detail[i] := det; nother := nother + 1;
      CONTINUE;
    END IF;
    FOR k IN s..j - 1 LOOP
      sk := ls[k];
      IF w_bal[sk] IS NOT NULL THEN
        w_bal[sk] := w_bal[sk] + la[k];
        l_after[k] := w_bal[sk];
        w_touched[sk] := true;
      END IF;
      l_keep[k] := true;
    END LOOP;
    o_outcome[i] := 'created'; o_tid[i] := ids[i]; o_fresh[i] := true;
    nfresh := nfresh + 1;
  END LOOP;
  IF j <= nl THEN
    RAISE EXCEPTION 'ledger: leg % names posting %, not one of 1..% in order', j, lp[j], n USING ERRCODE = 'LG500';
  END IF;

  -- 4. the writes, in one statement: the transactions (ON CONFLICT on the key waits for a concurrent post
  --    of the same key in flight), the entries of those inserted, the cached balances (only if any was)
  IF nfresh > 0 THEN
    WITH ins_t AS (
      INSERT INTO ledger_transactions (id, currency, source_type, source_id, idempotency_key, memo)
      SELECT v.id, v.c, v.st, v.si, v.ky, v.m
        FROM unnest(p_id, p_currency, p_source_type, p_source_id, p_key, p_memo, o_fresh) WITH ORDINALITY AS v(id, c, st, si, ky, m, f, o)
       WHERE v.f ORDER BY v.o
      ON CONFLICT ON CONSTRAINT ledger_transactions_idempotency DO NOTHING
      RETURNING id, seq, created_at
    ), ins_e AS (
      INSERT INTO ledger_entries (transaction_id, wallet_id, currency, amount, balance_after)
      SELECT t.id, p_wallets[l.s], t.c, l.a, l.b
        FROM unnest(p_leg_posting, p_leg_slot, p_leg_amount, l_after, l_keep) WITH ORDINALITY AS l(p, s, a, b, kp, o)
        JOIN unnest(p_id, p_currency) WITH ORDINALITY AS t(id, c, o) ON t.o = l.p
       WHERE l.kp AND t.id IN (SELECT ins_t.id FROM ins_t)
       ORDER BY l.o
      RETURNING id
    ), upd AS (
      UPDATE ledger_wallets w
         SET balance = v.b,
             overdue_since = CASE WHEN v.p = 'prepaid' AND v.b < 0 THEN coalesce(w.overdue_since, now()) ELSE NULL END
        FROM unnest(p_wallets, w_bal, w_pol, w_touched) AS v(id, b, p, t)
       WHERE v.t AND w.id = v.id AND EXISTS (SELECT 1 FROM ins_t)
    )
    SELECT it.a, it.b, it.c, (SELECT array_agg(ins_e.id ORDER BY ins_e.id) FROM ins_e)
      INTO f_ids, f_seq, f_at, e_ids
      FROM (SELECT array_agg(ins_t.id ORDER BY ins_t.seq) AS a, array_agg(ins_t.seq ORDER BY ins_t.seq) AS b,
                   array_agg(ins_t.created_at ORDER BY ins_t.seq) AS c FROM ins_t) it;
    ninserted := coalesce(cardinality(f_ids), 0);

    IF ninserted < nfresh THEN
      -- keys committed meanwhile by concurrent posts (the insert waited for them); nothing was written for
      -- these postings. With the same content such a post would share our user wallets, whose locks we
      -- held when we looked: only postings between system wallets can be replayed here.
      lost_any := true;
      FOR i IN 1..n LOOP
        CONTINUE WHEN NOT o_fresh[i] OR ids[i] = ANY(coalesce(f_ids, '{}'));
        s := o_first[i]; j := s + o_legs[i];
        SELECT t.id, coalesce(t.currency = cur[i] AND t.source_type = p_source_type[i] AND t.source_id = p_source_id[i]
             AND (SELECT array_agg(q.z ORDER BY q.z) FROM (SELECT e.wallet_id::text || ':' || e.amount AS z FROM ledger_entries e WHERE e.transaction_id = t.id) q)
               = (SELECT array_agg(q.z ORDER BY q.z) FROM (SELECT wid[ls[g.x]]::text || ':' || la[g.x] AS z FROM generate_series(s, j - 1) g(x)) q), false)
          INTO wtid, same FROM ledger_transactions t WHERE t.idempotency_key = p_key[i];
        IF wtid IS NULL THEN
          RAISE EXCEPTION 'ledger: the insert of posting % did nothing, yet its key is unused', i USING ERRCODE = 'LG500';
        END IF;
        user_legs := false;
        FOR k IN s..j - 1 LOOP
          IF w_pol[ls[k]] <> 'system' THEN user_legs := true; END IF;
        END LOOP;
        IF user_legs AND same THEN
          RAISE EXCEPTION 'ledger: idempotency race on a locked wallet (posting %)', i USING ERRCODE = 'LG500';
        END IF;
        IF ninserted > 0 AND (user_legs OR (p_atomic AND NOT same)) THEN
          -- other postings are written (their balances may count this one): the statement fails as a whole
          RAISE EXCEPTION 'ledger: idempotency key % was used for a different transaction', p_key[i]
            USING ERRCODE = 'LG409', DETAIL = wtid::text;
        END IF;
        IF NOT same AND p_atomic THEN
          -- nothing was written by this call
          RETURN QUERY SELECT i, 'idempotency_conflict'::text, jsonb_build_object('transaction_id', wtid),
                              NULL::uuid, NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
                              NULL::timestamptz, NULL::bigint, NULL::uuid, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        IF same THEN
          o_outcome[i] := 'replayed'; o_tid[i] := wtid;
        ELSE
          o_outcome[i] := 'idempotency_conflict'; o_detail[i] := jsonb_build_object('transaction_id', wtid); o_tid[i] := NULL;
        END IF;
      END LOOP;
    END IF;
  END IF;

  -- 5. the result: the new postings from what the inserts returned, the others (replayed, refused; all
  --    after a lost race) looked up
  IF nfresh > 0 AND NOT lost_any THEN
    st := p_source_type; si := p_source_id; ky := p_key; mm := p_memo;
    fi := 0; ki := 0;
    FOR i IN 1..n LOOP
      CONTINUE WHEN NOT o_fresh[i];
      fi := fi + 1;
      r_ord := i; r_outcome := 'created'; r_detail := NULL;
      tx_id := ids[i]; tx_seq := f_seq[fi]; tx_currency := cur[i]; tx_source_type := st[i]; tx_source_id := si[i];
      tx_key := ky[i]; tx_memo := mm[i]; tx_created_at := f_at[fi];
      FOR k IN o_first[i]..o_first[i] + o_legs[i] - 1 LOOP
        ki := ki + 1;
        e_id := e_ids[ki]; e_wallet := wid[ls[k]]; e_amount := la[k]; e_after := l_after[k];
        RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  IF nother > 0 OR lost_any THEN
    RETURN QUERY
      SELECT r.o::int, r.oc, r.det, t.id, t.seq, t.currency, t.source_type, t.source_id, t.idempotency_key, t.memo, t.created_at,
             e.id, e.wallet_id, e.amount, e.balance_after
        FROM unnest(o_outcome, o_detail, o_tid) WITH ORDINALITY AS r(oc, det, tid, o)
        LEFT JOIN LATERAL (SELECT * FROM ledger_transactions x WHERE x.id = r.tid) t ON true
        LEFT JOIN LATERAL (SELECT * FROM ledger_entries x WHERE x.transaction_id = r.tid) e ON true
       WHERE lost_any OR r.oc <> 'created'
       ORDER BY r.o, e.id;
  END IF;
END $$;
