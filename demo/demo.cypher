// A small film graph for trying strata: classic films of the 1940s to
// 1960s, the people who directed them and acted in them, and the cities
// those people were born in.
//
//   (:Person)-[:ACTED_IN {role, billing}]->(:Film)
//   (:Person)-[:DIRECTED]->(:Film)
//   (:Person)-[:BORN_IN]->(:City)
//
// Load it with `strata --init demo/demo.cypher` (sh scripts/run.sh does).

CREATE CONSTRAINT film_title FOR (f:Film) REQUIRE f.title IS UNIQUE;
CREATE INDEX person_name FOR (p:Person) ON (p.name);
CREATE RANGE INDEX film_released FOR (f:Film) ON (f.released);

UNWIND [
  {title: 'The Philadelphia Story', released: 1940, genre: 'comedy'},
  {title: 'Citizen Kane', released: 1941, genre: 'drama'},
  {title: 'Casablanca', released: 1942, genre: 'romance'},
  {title: 'Notorious', released: 1946, genre: 'thriller'},
  {title: 'The Third Man', released: 1949, genre: 'thriller'},
  {title: 'Sunset Boulevard', released: 1950, genre: 'drama'},
  {title: 'Roman Holiday', released: 1953, genre: 'romance'},
  {title: 'Rear Window', released: 1954, genre: 'thriller'},
  {title: 'Sabrina', released: 1954, genre: 'romance'},
  {title: 'To Catch a Thief', released: 1955, genre: 'thriller'},
  {title: 'Vertigo', released: 1958, genre: 'thriller'},
  {title: 'North by Northwest', released: 1959, genre: 'thriller'},
  {title: 'Some Like It Hot', released: 1959, genre: 'comedy'},
  {title: 'Psycho', released: 1960, genre: 'thriller'},
  {title: 'The Apartment', released: 1960, genre: 'comedy'},
  {title: "Breakfast at Tiffany's", released: 1961, genre: 'romance'},
  {title: 'Charade', released: 1963, genre: 'thriller'}
] AS f
CREATE (:Film {title: f.title, released: f.released, genre: f.genre});

UNWIND [
  {name: 'Humphrey Bogart', born: 1899}, {name: 'Ingrid Bergman', born: 1915},
  {name: 'James Stewart', born: 1908}, {name: 'Kim Novak', born: 1933},
  {name: 'Grace Kelly', born: 1929}, {name: 'Anthony Perkins', born: 1932},
  {name: 'Janet Leigh', born: 1927}, {name: 'Cary Grant', born: 1904},
  {name: 'Eva Marie Saint', born: 1924}, {name: 'Audrey Hepburn', born: 1929},
  {name: 'Gregory Peck', born: 1916}, {name: 'William Holden', born: 1918},
  {name: 'Marilyn Monroe', born: 1926}, {name: 'Tony Curtis', born: 1925},
  {name: 'Jack Lemmon', born: 1925}, {name: 'Shirley MacLaine', born: 1934},
  {name: 'Katharine Hepburn', born: 1907}, {name: 'Joseph Cotten', born: 1905}
] AS p
CREATE (:Person:Actor {name: p.name, born: p.born});

UNWIND [
  {name: 'Michael Curtiz', born: 1886}, {name: 'Alfred Hitchcock', born: 1899},
  {name: 'William Wyler', born: 1902}, {name: 'Billy Wilder', born: 1906},
  {name: 'Blake Edwards', born: 1922}, {name: 'Stanley Donen', born: 1924},
  {name: 'George Cukor', born: 1899}, {name: 'Carol Reed', born: 1906}
] AS p
CREATE (:Person:Director {name: p.name, born: p.born});

// Orson Welles both directed and acted.
CREATE (:Person:Actor:Director {name: 'Orson Welles', born: 1915});

UNWIND [
  ['Humphrey Bogart', 'Casablanca', 'Rick Blaine', 1],
  ['Ingrid Bergman', 'Casablanca', 'Ilsa Lund', 2],
  ['James Stewart', 'Vertigo', 'John "Scottie" Ferguson', 1],
  ['Kim Novak', 'Vertigo', 'Madeleine Elster', 2],
  ['James Stewart', 'Rear Window', 'L. B. Jefferies', 1],
  ['Grace Kelly', 'Rear Window', 'Lisa Fremont', 2],
  ['Anthony Perkins', 'Psycho', 'Norman Bates', 1],
  ['Janet Leigh', 'Psycho', 'Marion Crane', 3],
  ['Cary Grant', 'North by Northwest', 'Roger Thornhill', 1],
  ['Eva Marie Saint', 'North by Northwest', 'Eve Kendall', 2],
  ['Cary Grant', 'Notorious', 'T. R. Devlin', 1],
  ['Ingrid Bergman', 'Notorious', 'Alicia Huberman', 2],
  ['Cary Grant', 'To Catch a Thief', 'John Robie', 1],
  ['Grace Kelly', 'To Catch a Thief', 'Frances Stevens', 2],
  ['Gregory Peck', 'Roman Holiday', 'Joe Bradley', 1],
  ['Audrey Hepburn', 'Roman Holiday', 'Princess Ann', 2],
  ['Humphrey Bogart', 'Sabrina', 'Linus Larrabee', 1],
  ['Audrey Hepburn', 'Sabrina', 'Sabrina Fairchild', 2],
  ['William Holden', 'Sabrina', 'David Larrabee', 3],
  ['William Holden', 'Sunset Boulevard', 'Joe Gillis', 1],
  ['Marilyn Monroe', 'Some Like It Hot', 'Sugar Kane', 1],
  ['Tony Curtis', 'Some Like It Hot', 'Joe', 2],
  ['Jack Lemmon', 'Some Like It Hot', 'Jerry', 3],
  ['Jack Lemmon', 'The Apartment', 'C. C. Baxter', 1],
  ['Shirley MacLaine', 'The Apartment', 'Fran Kubelik', 2],
  ['Audrey Hepburn', "Breakfast at Tiffany's", 'Holly Golightly', 1],
  ['Cary Grant', 'Charade', 'Peter Joshua', 1],
  ['Audrey Hepburn', 'Charade', 'Regina Lampert', 2],
  ['Cary Grant', 'The Philadelphia Story', 'C. K. Dexter Haven', 1],
  ['Katharine Hepburn', 'The Philadelphia Story', 'Tracy Lord', 2],
  ['James Stewart', 'The Philadelphia Story', 'Macaulay Connor', 3],
  ['Orson Welles', 'Citizen Kane', 'Charles Foster Kane', 1],
  ['Joseph Cotten', 'Citizen Kane', 'Jedediah Leland', 2],
  ['Joseph Cotten', 'The Third Man', 'Holly Martins', 1],
  ['Orson Welles', 'The Third Man', 'Harry Lime', 3]
] AS a
MATCH (p:Person {name: a[0]}), (f:Film {title: a[1]})
CREATE (p)-[:ACTED_IN {role: a[2], billing: a[3]}]->(f);

UNWIND [
  ['Michael Curtiz', 'Casablanca'], ['Alfred Hitchcock', 'Vertigo'],
  ['Alfred Hitchcock', 'Rear Window'], ['Alfred Hitchcock', 'Psycho'],
  ['Alfred Hitchcock', 'North by Northwest'], ['Alfred Hitchcock', 'Notorious'],
  ['Alfred Hitchcock', 'To Catch a Thief'], ['William Wyler', 'Roman Holiday'],
  ['Billy Wilder', 'Sabrina'], ['Billy Wilder', 'Sunset Boulevard'],
  ['Billy Wilder', 'Some Like It Hot'], ['Billy Wilder', 'The Apartment'],
  ['Blake Edwards', "Breakfast at Tiffany's"], ['Stanley Donen', 'Charade'],
  ['George Cukor', 'The Philadelphia Story'], ['Orson Welles', 'Citizen Kane'],
  ['Carol Reed', 'The Third Man']
] AS d
MATCH (p:Person {name: d[0]}), (f:Film {title: d[1]})
CREATE (p)-[:DIRECTED]->(f);

UNWIND [
  {name: 'New York City', country: 'United States'},
  {name: 'London', country: 'United Kingdom'},
  {name: 'Stockholm', country: 'Sweden'},
  {name: 'Bristol', country: 'United Kingdom'},
  {name: 'Brussels', country: 'Belgium'},
  {name: 'Los Angeles', country: 'United States'},
  {name: 'Philadelphia', country: 'United States'},
  {name: 'Hartford', country: 'United States'},
  {name: 'Chicago', country: 'United States'},
  {name: 'Budapest', country: 'Hungary'}
] AS c
CREATE (:City {name: c.name, country: c.country});

UNWIND [
  ['Humphrey Bogart', 'New York City'], ['Tony Curtis', 'New York City'],
  ['Anthony Perkins', 'New York City'], ['George Cukor', 'New York City'],
  ['Alfred Hitchcock', 'London'], ['Carol Reed', 'London'],
  ['Ingrid Bergman', 'Stockholm'], ['Cary Grant', 'Bristol'],
  ['Audrey Hepburn', 'Brussels'], ['Marilyn Monroe', 'Los Angeles'],
  ['Grace Kelly', 'Philadelphia'], ['Katharine Hepburn', 'Hartford'],
  ['Kim Novak', 'Chicago'], ['Michael Curtiz', 'Budapest']
] AS b
MATCH (p:Person {name: b[0]}), (c:City {name: b[1]})
CREATE (p)-[:BORN_IN]->(c);
