/**
 * The owner model: every resource row carries `owner_kind` and `owner_id`, the party that owns it and
 * pays for it. Today owners are personal accounts; organizations and partners' child identities own
 * resources the same way. The actor (the account that made a request) is recorded beside it
 * (`account_id` on resource rows: the creator), so company assets can return to their creators.
 */
export type OwnerKind = "account" | "org" | "partner_child";

export interface Owner {
  kind: OwnerKind;
  id: string;
}

export const accountOwner = (accountId: string): Owner => ({ kind: "account", id: accountId });

export const sameOwner = (a: Owner, b: Owner): boolean => a.kind === b.kind && a.id === b.id;

export const ownerKey = (o: Owner): string => `${o.kind}:${o.id}`;

/** The owner columns of a row a caller creates: the owner, and the member responsible for it (its creator). */
export const ownerColumnsOf = (p: { owner: Owner; accountId: string }) => ({
  owner_kind: p.owner.kind,
  owner_id: p.owner.id,
  account_id: p.accountId,
});
