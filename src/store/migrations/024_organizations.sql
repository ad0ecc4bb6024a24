-- Organizations (issue 13, src/orgs): one per account at a time, roles owner/admin/member, departments,
-- invitations, site visibility with grants and approvals, budgets and deploy rules. Company assets are rows of
-- the resource areas with owner_kind 'org' (migration 006); their account_id stays the responsible member.

CREATE TABLE orgs (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  owner_account_id uuid NOT NULL REFERENCES accounts (id),
  default_visibility text NOT NULL DEFAULT 'company'
    CHECK (default_visibility IN ('private', 'invited', 'department', 'company', 'public')),
  max_visibility text NOT NULL DEFAULT 'public'
    CHECK (max_visibility IN ('private', 'invited', 'department', 'company', 'public')),
  -- widening a site's visibility waits for the department's approver (or an admin)
  shared_approval boolean NOT NULL DEFAULT false,
  -- personal: members pay their company assets' usage; prepaid: the organization's wallet pays (card, suite later)
  billing_mode text NOT NULL DEFAULT 'personal' CHECK (billing_mode IN ('personal', 'prepaid', 'card', 'suite')),
  image_refresh_policy text NOT NULL DEFAULT 'notify' CHECK (image_refresh_policy IN ('off', 'notify', 'auto')),
  image_refresh_keep_days integer NOT NULL DEFAULT 30 CHECK (image_refresh_keep_days BETWEEN 1 AND 365),
  -- deploy guardrails (src/orgs/rules): allowed shapes, sizes, image prefix, regions, features, presets, summary
  deploy_rules jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE org_departments (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  code text NOT NULL,
  name text NOT NULL,
  parent_id uuid REFERENCES org_departments (id) ON DELETE SET NULL,
  approver_email text,
  deploy_blocked boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, code)
);
CREATE INDEX org_departments_parent ON org_departments (parent_id);

CREATE TABLE org_members (
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  -- one organization per account at a time
  account_id uuid NOT NULL UNIQUE REFERENCES accounts (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  department_id uuid REFERENCES org_departments (id) ON DELETE SET NULL,
  joined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, account_id)
);
CREATE INDEX org_members_department ON org_members (department_id);

CREATE TABLE org_invites (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  department_id uuid REFERENCES org_departments (id) ON DELETE SET NULL,
  -- SHA-256 of the invitation token (the link carries the token)
  token_hash bytea NOT NULL UNIQUE,
  invited_by uuid NOT NULL REFERENCES accounts (id),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'withdrawn')),
  accepted_by uuid REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  decided_at timestamptz
);
CREATE INDEX org_invites_org ON org_invites (org_id, status, created_at DESC);
CREATE UNIQUE INDEX org_invites_one_pending ON org_invites (org_id, lower(email)) WHERE status = 'pending';

-- visibility of company sites (pods, pod groups, static sites), keyed by the app's kind and id
CREATE TABLE org_site_access (
  app_kind text NOT NULL,
  app_id uuid NOT NULL,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  visibility text NOT NULL CHECK (visibility IN ('private', 'invited', 'department', 'company', 'public')),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_kind, app_id)
);
CREATE INDEX org_site_access_org ON org_site_access (org_id);

CREATE TABLE org_site_grants (
  app_kind text NOT NULL,
  app_id uuid NOT NULL,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  granted_by uuid NOT NULL REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_kind, app_id, account_id)
);

CREATE TABLE org_approvals (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_kind text NOT NULL,
  app_id uuid NOT NULL,
  slug text NOT NULL,
  requested_by uuid NOT NULL REFERENCES accounts (id),
  from_visibility text NOT NULL,
  to_visibility text NOT NULL,
  -- the department whose approver decides (the requester's), null: admins decide
  department_id uuid REFERENCES org_departments (id) ON DELETE SET NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'superseded')),
  decided_by uuid REFERENCES accounts (id),
  decided_at timestamptz,
  note text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX org_approvals_pending ON org_approvals (org_id, status, created_at DESC);

CREATE TABLE org_budgets (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (scope IN ('company', 'department', 'member')),
  department_id uuid REFERENCES org_departments (id) ON DELETE CASCADE,
  account_id uuid REFERENCES accounts (id),
  amount_krw bigint NOT NULL CHECK (amount_krw > 0),
  mode text NOT NULL CHECK (mode IN ('warn', 'block')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope = 'company' AND department_id IS NULL AND account_id IS NULL)
      OR (scope = 'department' AND department_id IS NOT NULL AND account_id IS NULL)
      OR (scope = 'member' AND account_id IS NOT NULL AND department_id IS NULL))
);
CREATE UNIQUE INDEX org_budgets_one_per_target
  ON org_budgets (org_id, scope, coalesce(department_id, '00000000-0000-0000-0000-000000000000'),
                  coalesce(account_id, '00000000-0000-0000-0000-000000000000'));

-- warn e-mails sent: once per budget, month and threshold (80, 100)
CREATE TABLE org_budget_alerts (
  budget_id uuid NOT NULL REFERENCES org_budgets (id) ON DELETE CASCADE,
  month date NOT NULL,
  threshold integer NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (budget_id, month, threshold)
);

-- the organization audit log filters by resource kind (the route's tag: pods, static, org, ...)
ALTER TABLE audit_log ADD COLUMN resource_kind text;
CREATE INDEX audit_log_owner_actor ON audit_log (owner_kind, owner_id, account_id, id DESC);
CREATE INDEX audit_log_owner_action ON audit_log (owner_kind, owner_id, action, id DESC);
CREATE INDEX audit_log_owner_kind ON audit_log (owner_kind, owner_id, resource_kind, id DESC);
