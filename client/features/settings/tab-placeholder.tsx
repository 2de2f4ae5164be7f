import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";

/** A settings tab whose screen a later issue fills: its title and a short line. */
export function TabPlaceholder({ title, description }: { title: string; description: string }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle className="text-lg">{title}</CardTitle>
        <CardDescription>{description}</CardDescription>
      </CardHeader>
      <CardContent>
        <div className="rounded-lg border border-dashed bg-muted/30 px-4 py-10 text-center text-sm text-muted-foreground">
          This section is coming soon.
        </div>
      </CardContent>
    </Card>
  );
}
