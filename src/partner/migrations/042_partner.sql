-- Partner platforms (issue 26, src/partner/README.md): partner accounts, their child identities and department chart.
-- Later parts add settlement and invoices (043) and site locks, visitor sessions and managed registries (044).

-- An account the operator made a partner. Money is in KRW like every wallet that pays usage (billing/ledger).
CREATE TABLE partners (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  billing_mode text NOT NULL DEFAULT 'child_prepaid' CHECK (billing_mode IN ('child_prepaid', 'partner_postpaid')),
  monthly_limit_krw bigint CHECK (monthly_limit_krw > 0),
  visitor_login_url text,
  -- what child tokens may carry at most (null: every scope a child may hold, src/partner/children/scopes.ts)
  child_scopes text[],
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- spec: postpaid requires a monthly limit
  CONSTRAINT partners_postpaid_limit CHECK (billing_mode <> 'partner_postpaid' OR monthly_limit_krw IS NOT NULL)
);

-- A partner's end user: owner {kind: 'partner_child', id}; tokens act as the partner's account for it.
CREATE TABLE partner_children (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (account_id),
  external_ref text NOT NULL,
  department_code text,
  tenant_ref text,
  monthly_cap_krw bigint CHECK (monthly_cap_krw > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
-- one live child per external_ref: a second issue answers the same child
CREATE UNIQUE INDEX partner_children_ref ON partner_children (partner_id, external_ref) WHERE deleted_at IS NULL;
CREATE INDEX partner_children_list ON partner_children (partner_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX partner_children_department ON partner_children (partner_id, department_code) WHERE deleted_at IS NULL;

-- The customer's organization chart as the partner pushes it, with each department's run policy.
CREATE TABLE partner_departments (
  partner_id uuid NOT NULL REFERENCES partners (account_id),
  code text NOT NULL,
  parent_code text,
  name text,
  max_running integer CHECK (max_running >= 0),
  deploy_blocked boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (partner_id, code)
);
