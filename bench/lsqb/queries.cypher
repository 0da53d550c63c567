// The nine LSQB queries (Mhedhbi, Lissandrini, Kuiper, Waudby, Szárnyas:
// "LSQB: a large-scale subgraph query benchmark", GRADES-NDA 2021) over
// the SF0.1 data as Kuzu ships it: node labels and relationship types are
// Kuzu's table names, and a Post or Comment also carries the label
// Message, as in LSQB's own Neo4j schema.  Each query follows a comment
// "// qN EXPECTED", the count LSQB's reference answers give for SF0.1.

// q1 8773828
MATCH (:Country)<-[:City_isPartOf_Country]-(:City)<-[:Person_isLocatedIn_City]-(:Person)
      <-[:Forum_hasMember_Person]-(:Forum)-[:Forum_containerOf_Post]->(:Post)
      <-[:Comment_replyOf_Post]-(:Comment)-[:Comment_hasTag_Tag]->(:Tag)
      -[:Tag_hasType_TagClass]->(:TagClass)
RETURN count(*) AS count;

// q2 82990
MATCH (person1:Person)-[:Person_knows_Person]-(person2:Person),
      (person1)<-[:Comment_hasCreator_Person]-(comment:Comment)-[:Comment_replyOf_Post]->(:Post)
      -[:Post_hasCreator_Person]->(person2)
RETURN count(*) AS count;

// q3 30456
MATCH (country:Country)
MATCH (person1:Person)-[:Person_isLocatedIn_City]->(:City)-[:City_isPartOf_Country]->(country)
MATCH (person2:Person)-[:Person_isLocatedIn_City]->(:City)-[:City_isPartOf_Country]->(country)
MATCH (person3:Person)-[:Person_isLocatedIn_City]->(:City)-[:City_isPartOf_Country]->(country)
MATCH (person1)-[:Person_knows_Person]-(person2)-[:Person_knows_Person]-(person3)
      -[:Person_knows_Person]-(person1)
RETURN count(*) AS count;

// q4 784511
MATCH (:Tag)<-[:Post_hasTag_Tag|Comment_hasTag_Tag]-(message:Message)
      -[:Post_hasCreator_Person|Comment_hasCreator_Person]->(:Person),
      (message)<-[:Person_likes_Comment|Person_likes_Post]-(:Person),
      (message)<-[:Comment_replyOf_Comment|Comment_replyOf_Post]-(:Comment)
RETURN count(*) AS count;

// q5 1079722
MATCH (tag1:Tag)<-[:Post_hasTag_Tag|Comment_hasTag_Tag]-(:Message)
      <-[:Comment_replyOf_Post|Comment_replyOf_Comment]-(:Comment)-[:Comment_hasTag_Tag]->(tag2:Tag)
WHERE tag1 <> tag2
RETURN count(*) AS count;

// q6 55607896
MATCH (person1:Person)-[:Person_knows_Person]-(:Person)-[:Person_knows_Person]-(person3:Person)
      -[:Person_hasInterest_Tag]->(:Tag)
WHERE person1 <> person3
RETURN count(*) AS count;

// q7 1628132
MATCH (:Tag)<-[:Post_hasTag_Tag|Comment_hasTag_Tag]-(message:Message)
      -[:Post_hasCreator_Person|Comment_hasCreator_Person]->(:Person)
OPTIONAL MATCH (message)<-[:Person_likes_Comment|Person_likes_Post]-(:Person)
OPTIONAL MATCH (message)<-[:Comment_replyOf_Comment|Comment_replyOf_Post]-(:Comment)
RETURN count(*) AS count;

// q8 537142
MATCH (tag1:Tag)<-[:Post_hasTag_Tag|Comment_hasTag_Tag]-(:Message)
      <-[:Comment_replyOf_Post|Comment_replyOf_Comment]-(comment:Comment)-[:Comment_hasTag_Tag]->(tag2:Tag)
WHERE NOT (comment)-[:Comment_hasTag_Tag]->(tag1) AND tag1 <> tag2
RETURN count(*) AS count;

// q9 51009398
MATCH (person1:Person)-[:Person_knows_Person]-(person2:Person)-[:Person_knows_Person]-(person3:Person)
      -[:Person_hasInterest_Tag]->(:Tag)
WHERE NOT (person1)-[:Person_knows_Person]-(person3) AND person1 <> person3
RETURN count(*) AS count;
