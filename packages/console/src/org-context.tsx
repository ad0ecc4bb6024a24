import { createContext, useCallback, useContext, useEffect, useState } from "react";
import { api, ownerContext, PlatformApiError, setOwnerContext, unwrap, type Org, type OwnerContext } from "./api";
import { useI18n } from "./i18n";

/** The signed-in account's organization and the context the console works in (api.ts sends X-Owner from it). */
export interface OrgState {
  /** the organization; null when the account is in none; undefined while asking (or when asking failed) */
  org: Org | null | undefined;
  error: unknown;
  owner: OwnerContext;
  setOwner: (owner: OwnerContext) => void;
  reload: () => Promise<void>;
}

const OrgContext = createContext<OrgState>({
  org: undefined,
  error: null,
  owner: "me",
  setOwner: () => {},
  reload: async () => {},
});

export const OrgProvider = OrgContext.Provider;
export const useOrg = () => useContext(OrgContext);

/**
 * Asks GET /v1/org (always personal, see api.ts) while someone is signed in. Not in an organization (404): the
 * context goes back to personal, so a choice kept from an organization the account left cannot linger.
 */
export function useOrgState(signedIn: boolean): OrgState {
  const [org, setOrg] = useState<Org | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [owner, setOwnerState] = useState<OwnerContext>(ownerContext);
  const setOwner = useCallback((next: OwnerContext) => {
    setOwnerContext(next);
    setOwnerState(next);
  }, []);
  const reload = useCallback(async () => {
    try {
      setOrg(await unwrap(api.GET("/v1/org")));
      setError(null);
    } catch (err) {
      if (err instanceof PlatformApiError && err.status === 404) {
        setOrg(null);
        setError(null);
        setOwner("me");
      } else setError(err);
    }
  }, [setOwner]);
  useEffect(() => {
    if (signedIn) void reload();
    else setOrg(undefined);
  }, [signedIn, reload]);
  return { org, error, owner, setOwner, reload };
}

/** The header's "Personal / <organization>" choice, shown to members of an organization. */
export function ContextSwitch({ onSwitched }: { onSwitched: () => void }) {
  const { t } = useI18n();
  const { org, owner, setOwner } = useOrg();
  if (!org) return null;
  return (
    <label className={`context-switch ${owner}`}>
      <span className="sr-only">{t("ctx.label")}</span>
      <select
        value={owner}
        data-testid="context-switch"
        onChange={(e) => {
          setOwner(e.target.value === "org" ? "org" : "me");
          onSwitched();
        }}
      >
        <option value="me">{t("ctx.personal")}</option>
        <option value="org">{org.name}</option>
      </select>
    </label>
  );
}

/** A band over every page while the console works for the organization: what is listed and created is its. */
export function ContextBanner({ onSwitched }: { onSwitched: () => void }) {
  const { t } = useI18n();
  const { org, owner, setOwner } = useOrg();
  if (owner !== "org") return null;
  return (
    <div className="context-banner" role="note" data-testid="context-banner">
      <span>{t("ctx.banner", { name: org?.name ?? "…" })}</span>
      <button type="button" className="btn small ghost" onClick={() => (setOwner("me"), onSwitched())}>
        {t("ctx.toPersonal")}
      </button>
    </div>
  );
}
