import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes } from "react";

/** A small history router: the server answers every console path with the page, which draws the route. */
const Path = createContext<{ path: string; navigate: (to: string) => void }>({ path: "/", navigate: () => {} });

export function useRouter() {
  return useContext(Path);
}

export function RouterProvider({ children }: { children: React.ReactNode }) {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const onPop = () => setPath(window.location.pathname);
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  // `to` may carry a query (?template=...); the route is its path, the page reads the query itself
  const navigate = (to: string) => {
    const url = new URL(to, window.location.origin);
    if (url.pathname + url.search !== window.location.pathname + window.location.search)
      window.history.pushState(null, "", to);
    setPath(url.pathname);
    window.scrollTo(0, 0);
  };
  return <Path.Provider value={{ path, navigate }}>{children}</Path.Provider>;
}

/** `also`: other path prefixes under which this link counts as the current page (a section's sub-pages). */
export function Link({
  to,
  also = [],
  ...rest
}: { to: string; also?: string[] } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate, path } = useRouter();
  const current = [to, ...also].some((p) => path === p || (p !== "/" && path.startsWith(`${p}/`)));
  return (
    <a
      {...rest}
      href={to}
      aria-current={current ? "page" : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        navigate(to);
      }}
    />
  );
}
