-- Change feed for per-owner read caches (src/kernel/change-feed.ts): every change to a resource row
-- NOTIFYs its owner, delivered at commit; identical payloads in one transaction are delivered once.
CREATE FUNCTION notify_owner_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('owner_changed', OLD.owner_kind || ':' || OLD.owner_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('owner_changed', NEW.owner_kind || ':' || NEW.owner_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER databases_owner_change AFTER INSERT OR UPDATE OR DELETE ON databases
  FOR EACH ROW EXECUTE FUNCTION notify_owner_change();


-- Metering pages through billable databases in (owner, id) order (src/databases/metering.ts).
CREATE INDEX databases_billable ON databases (owner_kind, owner_id, id) WHERE state IN ('running', 'paused');
