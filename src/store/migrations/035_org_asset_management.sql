-- Who changes company assets (issue 34; src/orgs/README.md, "Who changes company assets"): members change and delete
-- only the assets they are responsible for (the resource's account_id), admins and the owner all of them. An admin
-- can let every member manage every company asset, as before this rule.
ALTER TABLE orgs ADD COLUMN members_manage_all_assets boolean NOT NULL DEFAULT false;
