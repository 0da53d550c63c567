// comment
MATCH (a) /* block */ CREATE (b) WITH a MATCH (c) RETURN c;