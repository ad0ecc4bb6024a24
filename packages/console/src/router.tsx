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
  const navigate = (to: string) => {
    if (to !== window.location.pathname) window.history.pushState(null, "", to);
    setPath(to);
    window.scrollTo(0, 0);
  };
  return <Path.Provider value={{ path, navigate }}>{children}</Path.Provider>;
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate, path } = useRouter();
  const current = path === to || (to !== "/" && path.startsWith(`${to}/`));
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
