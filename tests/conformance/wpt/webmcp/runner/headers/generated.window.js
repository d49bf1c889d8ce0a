test(() => assert_false(window.originAgentCluster, "originAgentCluster"), "a generated page gets its script's headers");
