// esbuild bundles the platform helpers as text (--loader:.go=text ...).
declare module "*.go" {
  const text: string;
  export default text;
}
declare module "*.py" {
  const text: string;
  export default text;
}
declare module "*.java" {
  const text: string;
  export default text;
}
