-- A deleted child's locked sites stay closed (src/partner/access/README.md, "Deleted children"): the lock and its
-- invite lists stay bound to the site, only the visitor sessions go (every visitor vouched for it is signed out).
-- 044 dropped the locks too, and the sites passed to the partner account, where no partner lock applies: public.
CREATE OR REPLACE FUNCTION partner_child_access_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM partner_visitor_sessions WHERE child_id = NEW.id;
  RETURN NULL;
END $$;
